-- Privileges: who may load, replace, drop and score models, and what an
-- unprivileged user cannot do however they try (docs/reference.md,
-- "Privileges").
--   * loading/replacing/dropping: EXECUTE not granted to PUBLIC;
--   * scoring: granted to PUBLIC, and can be revoked and granted per role;
--   * reading server files: pg_read_server_files as well;
--   * gpu_model_store: no privileges for anyone but its owner, and bytes that
--     got in anyway are validated again when a backend loads them;
--   * SECURITY DEFINER only with a pinned search_path; the catalog queries
--     that run as the owner cannot be hijacked through the caller's
--     search_path;
--   * settings that load code or inject faults are superuser-only.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
\set m_bc :models 'breast_cancer.json'
\set m_cycle :models 'bad/cycle.json'
SELECT gpu_load_model('priv_bc', pg_read_binary_file(:'m_bc')) AS v;
CREATE TEMP TABLE bc_row AS SELECT array_fill(1::real, ARRAY[30]) AS f;
GRANT SELECT ON bc_row TO PUBLIC;

-- The extension's own objects ------------------------------------------------

-- Loading, replacing and dropping functions (whatever their signature) that
-- PUBLIC may execute: none.
SELECT p.oid::regprocedure AS executable_by_public
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_gpuscore')
   AND p.proname ~ '^gpu_(load|drop|replace|import|register)'
   AND has_function_privilege('public', p.oid, 'EXECUTE');

-- SECURITY DEFINER functions without a search_path starting at pg_catalog: none.
SELECT p.oid::regprocedure AS unpinned_security_definer
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_gpuscore')
   AND p.prosecdef
   AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false);

-- Tables and sequences of the extension PUBLIC may change: none.
SELECT c.oid::regclass AS writable_by_public, priv
  FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
       CROSS JOIN unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) priv
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_gpuscore')
   AND c.relkind = 'r'
   AND has_table_privilege('public', c.oid, priv)
UNION ALL
SELECT c.oid::regclass, 'USAGE'
  FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_gpuscore')
   AND CASE WHEN c.relkind = 'S' THEN has_sequence_privilege('public', c.oid, 'USAGE') END;

-- What PUBLIC may read: the view, not the table with the bytes.
SELECT has_table_privilege('public', 'gpu_models', 'SELECT') AS view_readable,
       has_table_privilege('public', 'gpu_model_store', 'SELECT') AS store_readable,
       has_function_privilege('public', 'gpu_score(text, real[])', 'EXECUTE') AS can_score;

-- An ordinary user -------------------------------------------------------------
CREATE ROLE regress_gs_user;
SET ROLE regress_gs_user;
-- scores and sees which models exist
SELECT round(gpu_score('priv_bc', f)::numeric, 6) AS p FROM bc_row;
SELECT name, version FROM gpu_models WHERE name = 'priv_bc';
-- but cannot load, replace, drop, or touch the table (42501 each)
\set VERBOSITY sqlstate
SELECT gpu_load_model('priv_bc', '\x7b7d'::bytea);
SELECT gpu_load_model('priv_bc', '\x7b7d'::bytea, 'auto', -999);
SELECT gpu_load_model_file('priv_bc', :'m_bc');
SELECT gpu_load_model_file('priv_bc', :'m_bc', 'auto', -999);
SELECT gpu_drop_model('priv_bc');
SELECT count(*) FROM gpu_model_store;
INSERT INTO gpu_model_store (name, version, format, objective, n_features, n_outputs,
                             n_trees, max_depth, size_bytes, model, loaded_by)
     VALUES ('priv_evil', 1, 'xgboost-json', 'binary:logistic', 1, 1, 1, 1, 2, '\x7b7d', 'x');
UPDATE gpu_model_store SET model = '\x7b7d' WHERE name = 'priv_bc';
DELETE FROM gpu_model_store WHERE name = 'priv_bc';
TRUNCATE gpu_model_store;
SELECT nextval('gpu_model_id_seq');
-- nor set what loads code, injects faults or lifts the caps
SET pg_gpuscore.provider = '/tmp/evil.so';
SET pg_gpuscore.fault_injection = 'oom';
SET pg_gpuscore.max_model_size = '1GB';
SET pg_gpuscore.max_trees = 10000000;
SET pg_gpuscore.max_tree_depth = 100000;
SET pg_gpuscore.max_features = 1000;
\set VERBOSITY default
RESET ROLE;
SELECT name, version FROM gpu_models WHERE name LIKE 'priv%' ORDER BY name;

-- Scoring can be restricted to chosen roles ------------------------------------
REVOKE EXECUTE ON FUNCTION gpu_score(text, real[]) FROM PUBLIC;
CREATE ROLE regress_gs_scorer;
GRANT EXECUTE ON FUNCTION gpu_score(text, real[]) TO regress_gs_scorer;
SET ROLE regress_gs_user;
\set VERBOSITY sqlstate
SELECT gpu_score('priv_bc', f) FROM bc_row;
\set VERBOSITY default
RESET ROLE;
SET ROLE regress_gs_scorer;
SELECT round(gpu_score('priv_bc', f)::numeric, 6) AS p FROM bc_row;
RESET ROLE;
GRANT EXECUTE ON FUNCTION gpu_score(text, real[]) TO PUBLIC;
REVOKE EXECUTE ON FUNCTION gpu_score(text, real[]) FROM regress_gs_scorer;

-- A loader: EXECUTE granted; reading server files needs pg_read_server_files --
CREATE ROLE regress_gs_loader;
GRANT EXECUTE ON FUNCTION gpu_load_model(text, bytea, text),
                          gpu_load_model_file(text, text, text),
                          gpu_drop_model(text, boolean) TO regress_gs_loader;
CREATE TABLE upload AS SELECT pg_read_binary_file(:'m_bc') AS bytes;
GRANT SELECT ON upload TO regress_gs_loader;
SET ROLE regress_gs_loader;
SELECT gpu_load_model('priv_bc_loader', (SELECT bytes FROM upload)) AS v;
SELECT gpu_load_model('priv_bc_loader', (SELECT bytes FROM upload)) AS replaced;
\set VERBOSITY sqlstate
SELECT gpu_load_model_file('priv_bc_file', :'m_bc');
\set VERBOSITY default
-- the validation applies to loaders too
SELECT gpu_load_model('priv_bad', '\x7b7d'::bytea);
RESET ROLE;
GRANT pg_read_server_files TO regress_gs_loader;
SET ROLE regress_gs_loader;
SELECT gpu_load_model_file('priv_bc_file', :'m_bc') AS v;
SELECT gpu_drop_model('priv_bc_file'), gpu_drop_model('priv_bc_loader');
RESET ROLE;
REVOKE pg_read_server_files FROM regress_gs_loader;

-- Bytes that bypass gpu_load_model are validated when loaded ------------------
-- Only the table's owner (a superuser here) can write it directly; even then a
-- model that fails validation gives an ERROR when a backend loads it.
INSERT INTO gpu_model_store (name, version, format, objective, n_features, n_outputs,
                             n_trees, max_depth, size_bytes, model, loaded_by)
     VALUES ('priv_crafted', 1, 'xgboost-json', 'binary:logistic', 30, 1, 3, 2, 2950,
             pg_read_binary_file(:'m_cycle'), current_user),
            ('priv_crafted_junk', 1, 'xgboost-ubj', 'binary:logistic', 30, 1, 3, 2, 4,
             '\x5b245a23', current_user);
SELECT gpu_score('priv_crafted', f) FROM bc_row;
SELECT gpu_score('priv_crafted_junk', f) FROM bc_row;
SELECT gpu_drop_model('priv_crafted'), gpu_drop_model('priv_crafted_junk');
SELECT round(gpu_score('priv_bc', f)::numeric, 6) AS still_scoring FROM bc_row;

-- search_path hijacking ----------------------------------------------------------
-- An unprivileged user who owns a schema puts an "=" for text, a table called
-- gpu_model_store and functions named like the ones the extension calls
-- ahead of pg_catalog in the search_path.  None of them may run: the catalog
-- queries run as the table's owner and would otherwise run them as the owner.
CREATE SCHEMA regress_gs_evil AUTHORIZATION regress_gs_user;
SET ROLE regress_gs_user;
CREATE TABLE regress_gs_evil.log (who name, what text);
CREATE FUNCTION regress_gs_evil.texteq(text, text) RETURNS boolean LANGUAGE sql
    AS $$ INSERT INTO regress_gs_evil.log VALUES (current_user, 'operator') RETURNING true $$;
CREATE OPERATOR regress_gs_evil.= (LEFTARG = text, RIGHTARG = text,
                                   FUNCTION = regress_gs_evil.texteq);
CREATE FUNCTION regress_gs_evil.now() RETURNS timestamptz LANGUAGE sql
    AS $$ INSERT INTO regress_gs_evil.log VALUES (current_user, 'now') RETURNING 'epoch'::timestamptz $$;
CREATE FUNCTION regress_gs_evil.nextval(regclass) RETURNS bigint LANGUAGE sql
    AS $$ INSERT INTO regress_gs_evil.log VALUES (current_user, 'nextval') RETURNING 1::bigint $$;
CREATE FUNCTION regress_gs_evil.length(text) RETURNS integer LANGUAGE sql
    AS $$ INSERT INTO regress_gs_evil.log VALUES (current_user, 'length') RETURNING 1 $$;
CREATE TABLE regress_gs_evil.gpu_model_store (LIKE public.gpu_models);
GRANT INSERT ON regress_gs_evil.log TO PUBLIC;
SET search_path = regress_gs_evil, public, pg_catalog;
SELECT round(public.gpu_score('priv_bc', f)::numeric, 6) AS p FROM bc_row;
SELECT public.gpu_model_lock('priv_bc') AS locked_version;
\set VERBOSITY sqlstate
SELECT public.gpu_drop_model('priv_bc');
\set VERBOSITY default
RESET ROLE;
-- the loader with the same search_path
GRANT USAGE ON SCHEMA regress_gs_evil TO regress_gs_loader;
SET ROLE regress_gs_loader;
SET search_path = regress_gs_evil, public, pg_catalog;
SELECT public.gpu_load_model('priv_bc_hijack', (SELECT bytes FROM public.upload)) AS v;
SELECT round(public.gpu_score('priv_bc_hijack', f)::numeric, 6) AS p FROM pg_temp.bc_row;
SELECT public.gpu_drop_model('priv_bc_hijack');
RESET ROLE;
RESET search_path;
-- nothing of the user's ran, as anyone
SELECT who, what FROM regress_gs_evil.log;

\set VERBOSITY terse
DROP SCHEMA regress_gs_evil CASCADE;
\set VERBOSITY default
DROP TABLE upload;
REVOKE ALL ON FUNCTION gpu_load_model(text, bytea, text), gpu_load_model_file(text, text, text),
                       gpu_drop_model(text, boolean) FROM regress_gs_loader;
DROP ROLE regress_gs_user;
DROP ROLE regress_gs_scorer;
DROP ROLE regress_gs_loader;
SELECT gpu_drop_model('priv_bc');
