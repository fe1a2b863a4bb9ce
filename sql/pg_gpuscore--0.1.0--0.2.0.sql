/* pg_gpuscore--0.1.0--0.2.0.sql: update pg_gpuscore from 0.1.0 to 0.2.0 */

\echo Use "ALTER EXTENSION pg_gpuscore UPDATE TO '0.2.0'" to load this file. \quit

-- Forest images: the validated forest of a tree ensemble, stored by
-- gpu_load_model beside the model, which each session reads instead of
-- parsing the model again (src/core/forest_image.h).  Models loaded before
-- the update have none and are parsed as before until loaded again.
ALTER TABLE @extschema@.gpu_model_store ADD COLUMN compiled bytea;

-- Model bytes and images are compressed with lz4 where the server was built
-- with it (pglz takes ~25 ms per MB and cannot be interrupted).  Stored
-- values keep their compression until they are written again.
DO $$
BEGIN
    ALTER TABLE @extschema@.gpu_model_store ALTER COLUMN model SET COMPRESSION lz4,
                                            ALTER COLUMN compiled SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;   -- built without lz4: the default (pglz)
END
$$;
