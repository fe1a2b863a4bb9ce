-- gpu_score_table: scheduled scoring of a whole table in batches committed one
-- by one, into a score column of the table or into a results table, with a
-- run log (gpu_score_runs).  Concurrency, cancel and crash/restart are tested
-- in tests/t/ (TAP); pg_cron scheduling too.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
SELECT gpu_load_model('st_fraud', pg_read_binary_file(:'models' || 'demo_fraud.ubj')) AS version;
SELECT gpu_load_model('st_bc', pg_read_binary_file(:'models' || 'breast_cancer.json')) AS version;
SET pg_gpuscore.fallback_notice = off;
\set SHOW_CONTEXT never

-- A transactions table whose columns are the model's feature names, so the
-- procedure finds them by itself.
CREATE TABLE tx (
    id bigint PRIMARY KEY,
    amount real,
    hour real,
    merchant_risk real,
    device_age_days real,
    distance_km real,
    n_tx_1h real,
    n_tx_24h real,
    avg_amount_30d real,
    amount_ratio real,
    card_age_days real,
    account_age_days real,
    customer_age real,
    is_foreign real,
    is_online real,
    is_night real,
    mcc_risk real,
    ip_risk real,
    failed_logins_7d real,
    chargebacks_1y real,
    velocity_score real,
    balance real,
    credit_limit real,
    utilization real,
    days_since_last_tx real,
    email_domain_risk real,
    addr_mismatch real,
    n_cards_on_device real,
    session_seconds real,
    pos_entry_mode real,
    noise real,
    score real,
    scored_at timestamptz,
    changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO tx (id, amount, hour, merchant_risk, device_age_days, distance_km, n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days, account_age_days, customer_age, is_foreign, is_online, is_night, mcc_risk, ip_risk, failed_logins_7d, chargebacks_1y, velocity_score, balance, credit_limit, utilization, days_since_last_tx, email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds, pos_entry_mode, noise)
SELECT g, ((g * 7) % 101) / 10.0, ((g * 8) % 101) / 10.0, ((g * 9) % 101) / 10.0, ((g * 10) % 101) / 10.0, ((g * 11) % 101) / 10.0, ((g * 12) % 101) / 10.0, ((g * 13) % 101) / 10.0, ((g * 14) % 101) / 10.0, ((g * 15) % 101) / 10.0, ((g * 16) % 101) / 10.0, ((g * 17) % 101) / 10.0, ((g * 18) % 101) / 10.0, ((g * 19) % 101) / 10.0, ((g * 20) % 101) / 10.0, ((g * 21) % 101) / 10.0, ((g * 22) % 101) / 10.0, ((g * 23) % 101) / 10.0, ((g * 24) % 101) / 10.0, ((g * 25) % 101) / 10.0, ((g * 26) % 101) / 10.0, ((g * 27) % 101) / 10.0, ((g * 28) % 101) / 10.0, ((g * 29) % 101) / 10.0, ((g * 30) % 101) / 10.0, ((g * 31) % 101) / 10.0, ((g * 32) % 101) / 10.0, ((g * 33) % 101) / 10.0, ((g * 34) % 101) / 10.0, ((g * 35) % 101) / 10.0, ((g * 36) % 101) / 10.0
  FROM generate_series(1, 2500) g;
-- some missing values
UPDATE tx SET amount = NULL, hour = 'NaN' WHERE id % 97 = 0;
CREATE VIEW tx_expected AS
SELECT id, gpu_score('st_fraud', ARRAY[amount, hour, merchant_risk, device_age_days, distance_km, n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days, account_age_days, customer_age, is_foreign, is_online, is_night, mcc_risk, ip_risk, failed_logins_7d, chargebacks_1y, velocity_score, balance, credit_limit, utilization, days_since_last_tx, email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds, pos_entry_mode, noise]) AS expected FROM tx;

-- Score the unscored rows in place, 1000 rows per committed batch.
CALL gpu_score_table('st_fraud', 'tx', 'id', batch_size => 1000);
SELECT count(*) AS n, count(score) AS scored,
       count(*) FILTER (WHERE score IS DISTINCT FROM expected) AS differing
  FROM tx JOIN tx_expected USING (id);
SELECT run_id, model, model_version, source, target, mode, status, rows_scored, batches, last_key,
       finished_at >= started_at AS timed, error
  FROM gpu_score_runs ORDER BY run_id;

-- A second run finds nothing to do; new rows are scored by the next run.
CALL gpu_score_table('st_fraud', 'tx', 'id', batch_size => 1000);
INSERT INTO tx (id, amount, hour, merchant_risk, device_age_days, distance_km, n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days, account_age_days, customer_age, is_foreign, is_online, is_night, mcc_risk, ip_risk, failed_logins_7d, chargebacks_1y, velocity_score, balance, credit_limit, utilization, days_since_last_tx, email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds, pos_entry_mode, noise)
SELECT g, ((g * 7) % 101) / 10.0, ((g * 8) % 101) / 10.0, ((g * 9) % 101) / 10.0, ((g * 10) % 101) / 10.0, ((g * 11) % 101) / 10.0, ((g * 12) % 101) / 10.0, ((g * 13) % 101) / 10.0, ((g * 14) % 101) / 10.0, ((g * 15) % 101) / 10.0, ((g * 16) % 101) / 10.0, ((g * 17) % 101) / 10.0, ((g * 18) % 101) / 10.0, ((g * 19) % 101) / 10.0, ((g * 20) % 101) / 10.0, ((g * 21) % 101) / 10.0, ((g * 22) % 101) / 10.0, ((g * 23) % 101) / 10.0, ((g * 24) % 101) / 10.0, ((g * 25) % 101) / 10.0, ((g * 26) % 101) / 10.0, ((g * 27) % 101) / 10.0, ((g * 28) % 101) / 10.0, ((g * 29) % 101) / 10.0, ((g * 30) % 101) / 10.0, ((g * 31) % 101) / 10.0, ((g * 32) % 101) / 10.0, ((g * 33) % 101) / 10.0, ((g * 34) % 101) / 10.0, ((g * 35) % 101) / 10.0, ((g * 36) % 101) / 10.0
  FROM generate_series(2501, 2600) g;
CALL gpu_score_table('st_fraud', 'tx', 'id', batch_size => 1000);
SELECT count(*) AS n, count(*) FILTER (WHERE score IS DISTINCT FROM expected) AS differing
  FROM tx JOIN tx_expected USING (id);
SELECT run_id, status, rows_scored, batches, last_key FROM gpu_score_runs ORDER BY run_id;

-- Mode 'changed': rows changed since they were scored (changed_at later than
-- scored_at, set by each run).
UPDATE tx SET score = NULL, scored_at = NULL;
CALL gpu_score_table('st_fraud', 'tx', 'id', scored_at_column => 'scored_at', batch_size => 1000);
UPDATE tx SET amount = amount + 1, changed_at = clock_timestamp() WHERE id % 10 = 0;
CALL gpu_score_table('st_fraud', 'tx', 'id', mode => 'changed', changed_column => 'changed_at',
                     scored_at_column => 'scored_at', batch_size => 1000);
SELECT rows_scored FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1;
SELECT count(*) FILTER (WHERE score IS DISTINCT FROM expected) AS differing
  FROM tx JOIN tx_expected USING (id);

-- Into a results table: key, score and, when the table has them, the model
-- version and the time of scoring.  A filter limits the rows.
CREATE TABLE tx_scores (id bigint PRIMARY KEY, score double precision NOT NULL,
                        model_version integer, scored_at timestamptz);
CALL gpu_score_table('st_fraud', 'tx', 'id', target => 'tx_scores', filter => 'id <= 2000',
                     batch_size => 700);
SELECT count(*) AS n, max(id) AS max_id, count(*) FILTER (WHERE model_version = 1) AS v1,
       count(*) FILTER (WHERE scored_at IS NULL) AS no_time,
       count(*) FILTER (WHERE score::real IS DISTINCT FROM expected) AS differing
  FROM tx_scores JOIN tx_expected USING (id);
SELECT target, status, rows_scored, batches FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1;

-- Mode 'all' rescores every row (here with the features named explicitly,
-- a model without feature names, and a smallint-free subset of columns).
CREATE TABLE bc_rows (k integer PRIMARY KEY, c1 double precision, c2 double precision, c3 double precision, c4 double precision, c5 double precision, c6 double precision, c7 double precision, c8 double precision, c9 double precision, c10 double precision, c11 double precision, c12 double precision, c13 double precision, c14 double precision, c15 double precision, c16 double precision, c17 double precision, c18 double precision, c19 double precision, c20 double precision, c21 double precision, c22 double precision, c23 double precision, c24 double precision, c25 double precision, c26 double precision, c27 double precision, c28 double precision, c29 double precision, c30 double precision, s numeric);
INSERT INTO bc_rows SELECT g, ((g * 4) % 53) * 1.5, ((g * 5) % 53) * 2.5, ((g * 6) % 53) * 3.5, ((g * 7) % 53) * 4.5, ((g * 8) % 53) * 5.5, ((g * 9) % 53) * 6.5, ((g * 10) % 53) * 7.5, ((g * 11) % 53) * 8.5, ((g * 12) % 53) * 9.5, ((g * 13) % 53) * 10.5, ((g * 14) % 53) * 11.5, ((g * 15) % 53) * 12.5, ((g * 16) % 53) * 13.5, ((g * 17) % 53) * 14.5, ((g * 18) % 53) * 15.5, ((g * 19) % 53) * 16.5, ((g * 20) % 53) * 17.5, ((g * 21) % 53) * 18.5, ((g * 22) % 53) * 19.5, ((g * 23) % 53) * 20.5, ((g * 24) % 53) * 21.5, ((g * 25) % 53) * 22.5, ((g * 26) % 53) * 23.5, ((g * 27) % 53) * 24.5, ((g * 28) % 53) * 25.5, ((g * 29) % 53) * 26.5, ((g * 30) % 53) * 27.5, ((g * 31) % 53) * 28.5, ((g * 32) % 53) * 29.5, ((g * 33) % 53) * 30.5, NULL
  FROM generate_series(1, 300) g;
CALL gpu_score_table('st_bc', 'bc_rows', 'k', score_column => 's', mode => 'all', batch_size => 128,
                     features => ARRAY['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10', 'c11', 'c12', 'c13', 'c14', 'c15', 'c16', 'c17', 'c18', 'c19', 'c20', 'c21', 'c22', 'c23', 'c24', 'c25', 'c26', 'c27', 'c28', 'c29', 'c30']);
SELECT count(*) AS n,
       count(*) FILTER (WHERE s IS DISTINCT FROM gpu_score('st_bc', ARRAY[c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, c23, c24, c25, c26, c27, c28, c29, c30])::numeric) AS differing
  FROM bc_rows;
SELECT mode, status, rows_scored, batches, last_key FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1;

-- A model replaced between runs: the next run uses (and logs) the new version.
SELECT gpu_load_model('st_fraud', pg_read_binary_file(:'models' || 'demo_fraud.ubj')) AS version;
UPDATE tx SET score = NULL WHERE id <= 10;
CALL gpu_score_table('st_fraud', 'tx', 'id');
SELECT model_version, rows_scored FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1;

-- A failing batch: the run stops with status failed and the error, the
-- batches committed before it stay, and the error reaches the caller.
UPDATE tx SET score = NULL;
UPDATE tx SET amount = 'Infinity' WHERE id = 1500;
CALL gpu_score_table('st_fraud', 'tx', 'id', batch_size => 1000);
SELECT status, rows_scored, batches, last_key, error FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1;
SELECT count(score) AS kept FROM tx;
UPDATE tx SET amount = 1 WHERE id = 1500;
CALL gpu_score_table('st_fraud', 'tx', 'id', batch_size => 1000);
SELECT status, rows_scored FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1;

-- A deferred constraint of the written table is checked in each batch, so a
-- batch that breaks it fails like any other (status failed, the batches
-- before it kept, the run lock released), not at its COMMIT.
CREATE TABLE tx_known (id bigint PRIMARY KEY);
INSERT INTO tx_known SELECT id FROM tx WHERE id <> 1500;
CREATE TABLE tx_checked (id bigint PRIMARY KEY
                           REFERENCES tx_known DEFERRABLE INITIALLY DEFERRED,
                         score real);
CALL gpu_score_table('st_fraud', 'tx', 'id', target => 'tx_checked', batch_size => 1000);
SELECT status, rows_scored, error FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1;
SELECT count(*) AS kept FROM tx_checked;
SELECT count(*) AS run_locks_left FROM pg_locks
 WHERE locktype = 'advisory' AND pid = pg_backend_pid();
DROP TABLE tx_checked, tx_known;

-- Cancel (statement_timeout here, hitting a batch slowed down by its filter):
-- the run is logged as cancelled and the cancel reaches the caller.
UPDATE tx SET score = NULL WHERE id <= 5;
SET statement_timeout = '200ms';
CALL gpu_score_table('st_fraud', 'tx', 'id', batch_size => 1, filter => 'pg_sleep(0.5) IS NOT NULL');
RESET statement_timeout;
SELECT status, error FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1;

-- Two runs at once on one table (one is skipped or waits) are tested in
-- tests/t/010_score_table.pl.

-- Errors in the arguments are reported before anything runs.
CALL gpu_score_table('nope', 'tx', 'id');
CALL gpu_score_table('st_bc', 'tx', 'id');
CALL gpu_score_table('st_fraud', 'tx', 'nope');
CALL gpu_score_table('st_fraud', 'tx', 'changed_at');
CALL gpu_score_table('st_fraud', 'tx', 'id', score_column => 'changed_at');
CALL gpu_score_table('st_fraud', 'tx', 'id', mode => 'sometimes');
CALL gpu_score_table('st_fraud', 'tx', 'id', mode => 'changed');
CALL gpu_score_table('st_fraud', 'tx', 'id', batch_size => 0);
CALL gpu_score_table('st_fraud', 'tx', 'id', features => ARRAY['amount', 'nope']);
CALL gpu_score_table('st_fraud', 'tx', 'id', features => ARRAY['amount']);
CALL gpu_score_table('st_fraud', 'tx', 'id', target => 'bc_rows');
CREATE TABLE no_key_scores (id bigint, score real);
CALL gpu_score_table('st_fraud', 'tx', 'id', target => 'no_key_scores');
CALL gpu_score_table('st_fraud', 'tx', NULL);
-- It commits its batches, so it refuses to start where it cannot commit:
-- inside a transaction block, or called from a function.  Either way it
-- takes no run lock and logs no run.
SELECT count(*) AS runs_before FROM gpu_score_runs \gset
BEGIN;
CALL gpu_score_table('st_fraud', 'tx', 'id');
ROLLBACK;
CREATE FUNCTION score_tx_from_function() RETURNS void LANGUAGE plpgsql AS
  $$BEGIN CALL gpu_score_table('st_fraud', 'tx', 'id'); END$$;
SELECT score_tx_from_function();
DROP FUNCTION score_tx_from_function();
SELECT count(*) AS run_locks_left FROM pg_locks
 WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SELECT count(*) - :runs_before AS runs_logged FROM gpu_score_runs;
-- Its helpers are for it alone: called from a query, the run lock and the
-- hold of cancels refuse.
SELECT gpu_score_run_lock(1, false);
SELECT gpu_score_run_hold(1);
SELECT gpu_score_run_resume();

-- The run log is read-only for ordinary users.
CREATE ROLE score_table_user;
SET ROLE score_table_user;
SELECT count(*) > 0 AS can_read FROM gpu_score_runs;
DELETE FROM gpu_score_runs;
SELECT gpu_score_run_update(1, 0, 0, NULL, 'failed');
RESET ROLE;
DROP ROLE score_table_user;

DROP VIEW tx_expected;
DROP TABLE tx, tx_scores, bc_rows, no_key_scores;

