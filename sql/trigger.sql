-- Triggers that score rows as they are written.
--   gpu_score_trigger: BEFORE INSERT OR UPDATE FOR EACH ROW; writes the score
--     (and a flag, score >= threshold) into columns of the new row.
--   gpu_alert_trigger: AFTER INSERT FOR EACH STATEMENT with a transition
--     table; scores the inserted rows in batches and inserts those at or
--     above a threshold into an alerts table.
-- The output is the same with or without a GPU: single rows are always
-- scored on the CPU, and both engines give the same batch scores.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
\set m_fraud :models 'demo_fraud.ubj'
\set m_bc :models 'breast_cancer.json'
\set m_iris :models 'iris_softmax.json'
\set m_wine :models 'wine_softprob.json'
\set m_reg :models 'diabetes_reg.json'
\set m_poisson :models 'obj_poisson.json'
\set fraud_csv :abs_srcdir '/tests/fixtures/cases/demo_fraud.csv'
SELECT gpu_load_model('tg_fraud', pg_read_binary_file(:'m_fraud')) AS fraud,
       gpu_load_model('tg_bc', pg_read_binary_file(:'m_bc')) AS bc,
       gpu_load_model('tg_iris', pg_read_binary_file(:'m_iris')) AS iris,
       gpu_load_model('tg_wine', pg_read_binary_file(:'m_wine')) AS wine,
       gpu_load_model('tg_swap', pg_read_binary_file(:'m_reg')) AS swap;

--------------------------------------------------------------------------------
-- gpu_score_trigger
--------------------------------------------------------------------------------

-- Explicit feature columns (in model order) of any numeric type; the flag is
-- class >= 1 (iris: not setosa).  Unquoted names fold to lower case.
CREATE TABLE flowers (id int PRIMARY KEY, sepal_l real, sepal_w double precision,
                      petal_l numeric, petal_w integer, class real, not_setosa boolean);
CREATE TRIGGER classify BEFORE INSERT OR UPDATE ON flowers FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_iris', 'score_column=class',
                                     'features=sepal_l, sepal_w, Petal_L, "petal_w"',
                                     'flag_column=not_setosa', 'threshold=1');
INSERT INTO flowers (id, sepal_l, sepal_w, petal_l, petal_w) VALUES
  (1, 5.1, 3.5, 1.4, 0), (2, 6.7, 3.0, 5.2, 2), (3, 5.9, 3.0, 4.2, 1);
-- NULL features are missing values; a value given for the score is replaced.
INSERT INTO flowers VALUES (4, NULL, 3.0, NULL, 1, 42, NULL);
-- UPDATE re-scores the new row.
UPDATE flowers SET petal_l = 5.5, petal_w = 2 WHERE id = 3;
SELECT id, class, not_setosa,
       class = gpu_score('tg_iris', ARRAY[sepal_l, sepal_w, petal_l, petal_w]) AS same_as_gpu_score
  FROM flowers ORDER BY id;

-- Feature columns taken from the model's feature names (no features
-- argument); rows loaded with COPY.  Scores equal XGBoost's own (the fixture's
-- last column) and gpu_score's; NaN in the file is a missing value.
CREATE TABLE transactions (
  id bigint PRIMARY KEY,
  amount real, hour real, merchant_risk real, device_age_days real, distance_km real,
  n_tx_1h real, n_tx_24h real, avg_amount_30d real, amount_ratio real, card_age_days real,
  account_age_days real, customer_age real, is_foreign real, is_online real, is_night real,
  mcc_risk real, ip_risk real, failed_logins_7d real, chargebacks_1y real, velocity_score real,
  balance real, credit_limit real, utilization real, days_since_last_tx real,
  email_domain_risk real, addr_mismatch real, n_cards_on_device real, session_seconds real,
  pos_entry_mode real, noise real,
  xgb_score real,
  fraud_score real,
  is_suspicious boolean);
CREATE FUNCTION tx_features(t transactions) RETURNS real[] LANGUAGE sql AS $$
  SELECT ARRAY[t.amount, t.hour, t.merchant_risk, t.device_age_days, t.distance_km,
    t.n_tx_1h, t.n_tx_24h, t.avg_amount_30d, t.amount_ratio, t.card_age_days,
    t.account_age_days, t.customer_age, t.is_foreign, t.is_online, t.is_night,
    t.mcc_risk, t.ip_risk, t.failed_logins_7d, t.chargebacks_1y, t.velocity_score,
    t.balance, t.credit_limit, t.utilization, t.days_since_last_tx,
    t.email_domain_risk, t.addr_mismatch, t.n_cards_on_device, t.session_seconds,
    t.pos_entry_mode, t.noise] $$;
CREATE TRIGGER flag_tx BEFORE INSERT OR UPDATE ON transactions FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_fraud', 'score_column=fraud_score',
                                     'flag_column=is_suspicious', 'threshold=0.02');
COPY transactions (id, amount, hour, merchant_risk, device_age_days, distance_km,
  n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days,
  account_age_days, customer_age, is_foreign, is_online, is_night,
  mcc_risk, ip_risk, failed_logins_7d, chargebacks_1y, velocity_score,
  balance, credit_limit, utilization, days_since_last_tx,
  email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds,
  pos_entry_mode, noise, xgb_score) FROM :'fraud_csv' (FORMAT csv);
SELECT count(*) AS n, count(fraud_score) AS scored,
       count(*) FILTER (WHERE is_suspicious) AS suspicious,
       count(*) FILTER (WHERE abs(fraud_score - xgb_score) > 1e-6) AS differ_from_xgboost,
       count(*) FILTER (WHERE fraud_score IS DISTINCT FROM gpu_score('tg_fraud', tx_features(t))) AS differ_from_gpu_score,
       count(*) FILTER (WHERE is_suspicious IS DISTINCT FROM (fraud_score >= 0.02::float8)) AS wrong_flags
  FROM transactions t;
UPDATE transactions SET amount = amount * 20, hour = 3 WHERE id % 4 = 0;
SELECT count(*) FILTER (WHERE fraud_score <> xgb_score) AS rescored,
       count(*) FILTER (WHERE fraud_score IS DISTINCT FROM gpu_score('tg_fraud', tx_features(t))) AS differ_from_gpu_score,
       count(*) FILTER (WHERE is_suspicious IS DISTINCT FROM (fraud_score >= 0.02::float8)) AS wrong_flags
  FROM transactions t;

-- flag_when=below flags scores under the threshold instead, for scores where
-- lower is worse (an IsolationForest's): the same scores here, flagged when low.
ALTER TABLE transactions ADD COLUMN low_score real, ADD COLUMN looks_normal boolean;
CREATE TRIGGER flag_low BEFORE INSERT OR UPDATE ON transactions FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_fraud', 'score_column=low_score',
                                     'flag_column=looks_normal', 'threshold=0.02',
                                     'flag_when=below');
UPDATE transactions SET hour = hour;
SELECT count(*) FILTER (WHERE looks_normal) AS flagged_low,
       count(*) FILTER (WHERE looks_normal IS DISTINCT FROM (low_score < 0.02::float8)) AS wrong_flags,
       count(*) FILTER (WHERE looks_normal = is_suspicious) AS flagged_both_ways
  FROM transactions;
DROP TRIGGER flag_low ON transactions;
ALTER TABLE transactions DROP COLUMN low_score, DROP COLUMN looks_normal;

-- A model replaced between statements is seen by the next statement; rows
-- scored before keep their scores.  Two triggers with the same function on
-- one table each keep their own configuration.
CREATE TABLE patients (id int, f1 real, f2 real, f3 real, f4 real, f5 real, f6 real,
                       f7 real, f8 real, f9 real, f10 real, risk double precision,
                       risk_numeric numeric);
CREATE TRIGGER risk BEFORE INSERT OR UPDATE ON patients FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_swap', 'score_column=risk',
                                     'features=f1,f2,f3,f4,f5,f6,f7,f8,f9,f10');
CREATE TRIGGER risk_numeric BEFORE INSERT OR UPDATE ON patients FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_swap', 'score_column=risk_numeric',
                                     'features=f10,f9,f8,f7,f6,f5,f4,f3,f2,f1');
CREATE FUNCTION patient_features(p patients) RETURNS real[] LANGUAGE sql AS
  $$SELECT ARRAY[p.f1, p.f2, p.f3, p.f4, p.f5, p.f6, p.f7, p.f8, p.f9, p.f10]$$;
CREATE FUNCTION patient_features_reversed(p patients) RETURNS real[] LANGUAGE sql AS
  $$SELECT ARRAY[p.f10, p.f9, p.f8, p.f7, p.f6, p.f5, p.f4, p.f3, p.f2, p.f1]$$;
INSERT INTO patients (id, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10)
SELECT g, (g % 7 - 3) / 50.0, (g % 2) / 20.0, (g % 11 - 5) / 40.0, (g % 5 - 2) / 30.0,
       (g % 13 - 6) / 60.0, (g % 3 - 1) / 25.0, (g % 17 - 8) / 70.0, (g % 4) / 30.0,
       (g % 19 - 9) / 80.0, (g % 9 - 4) / 45.0
  FROM generate_series(1, 20) g;
SELECT gpu_load_model('tg_swap', pg_read_binary_file(:'m_poisson')) AS swap_version;
INSERT INTO patients (id, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10)
SELECT id + 100, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10 FROM patients;
SELECT id > 100 AS after_swap, count(*),
       count(*) FILTER (WHERE risk = gpu_score('tg_swap', patient_features(p))) AS scored_by_new_model,
       count(*) FILTER (WHERE risk_numeric::real = gpu_score('tg_swap', patient_features_reversed(p))) AS numeric_by_new_model
  FROM patients p GROUP BY 1 ORDER BY 1;
-- the numeric score column holds the shortest decimal of the real score
SELECT risk_numeric::text = gpu_score('tg_swap', patient_features_reversed(p))::text AS shortest
  FROM patients p WHERE id = 101;

-- Partitions with different column orders: each partition resolves its own
-- columns.
CREATE TABLE measurements (id int, sepal_l real, sepal_w real, petal_l real, petal_w real,
                           class real) PARTITION BY RANGE (id);
CREATE TABLE measurements_1 PARTITION OF measurements FOR VALUES FROM (0) TO (100);
CREATE TABLE measurements_2 (class real, petal_w real, petal_l real, sepal_w real,
                             sepal_l real, id int);
ALTER TABLE measurements ATTACH PARTITION measurements_2 FOR VALUES FROM (100) TO (200);
CREATE TRIGGER classify BEFORE INSERT OR UPDATE ON measurements FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_iris', 'score_column=class',
                                     'features=sepal_l,sepal_w,petal_l,petal_w');
INSERT INTO measurements (id, sepal_l, sepal_w, petal_l, petal_w)
VALUES (1, 5.1, 3.5, 1.4, 0.2), (150, 5.1, 3.5, 1.4, 0.2),
       (2, 6.7, 3.0, 5.2, 2.3), (151, 6.7, 3.0, 5.2, 2.3);
SELECT tableoid::regclass AS partition, id, class FROM measurements ORDER BY id;

-- Data errors: an infinite value, or a double precision/numeric value beyond
-- the range of real.  on_error=error (the default): the statement fails.
INSERT INTO flowers (id, sepal_l, sepal_w, petal_l, petal_w) VALUES (10, 5.1, 'Infinity', 1.4, 0);
INSERT INTO flowers (id, sepal_l, sepal_w, petal_l, petal_w) VALUES (10, 5.1, 1e300, 1.4, 0);
INSERT INTO flowers (id, sepal_l, sepal_w, petal_l, petal_w) VALUES (10, 5.1, 3.5, '-Infinity', 0);
UPDATE flowers SET sepal_l = '-Infinity' WHERE id = 1;
SELECT count(*) FROM flowers;
-- on_error=null: such rows get a NULL score and flag, with one WARNING per
-- statement; the other rows are scored.
CREATE OR REPLACE TRIGGER classify BEFORE INSERT OR UPDATE ON flowers FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_iris', 'score_column=class',
                                     'features=sepal_l,sepal_w,petal_l,petal_w',
                                     'flag_column=not_setosa', 'threshold=1', 'on_error=null');
INSERT INTO flowers (id, sepal_l, sepal_w, petal_l, petal_w) VALUES
  (10, 5.1, 'Infinity', 1.4, 0), (11, 6.7, 3.0, 5.2, 2), (12, 5.1, 3.5, 1e300, 0);
SELECT id, class, not_setosa FROM flowers WHERE id >= 10 ORDER BY id;

-- Configuration errors are reported at the first fire, naming the trigger
-- and the table; on_error=null does not apply to them.
CREATE TABLE cfg (id int, a real, b real, c real, d real, t text, s real, flag boolean,
                  g real GENERATED ALWAYS AS (a * 2) STORED, n numeric(3, 2), n2 numeric(1, 1));
CREATE FUNCTION pg_temp.try(args text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE OR REPLACE TRIGGER cfg_score BEFORE INSERT OR UPDATE ON cfg FOR EACH ROW '
                 'EXECUTE FUNCTION gpu_score_trigger(%s)', args);
  INSERT INTO cfg (id, a, b, c, d) VALUES (1, 6.7, 3.0, 5.2, 2.3);
  RAISE NOTICE 'no error';
END $$;
\set SHOW_CONTEXT never
-- arguments
SELECT pg_temp.try('');
SELECT pg_temp.try('''model=tg_iris''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''modle=x''');
SELECT pg_temp.try('''tg_iris'', ''score_column=s''');
SELECT pg_temp.try('''model='', ''score_column=s''');
SELECT pg_temp.try('''model=tg_iris'', ''model=tg_iris'', ''score_column=s''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''on_error=skip''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''on_error=null'', ''on_error=error''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''flag_column=flag''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''threshold=0.5''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''flag_column=flag'', ''threshold=high''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''flag_column=flag'', ''threshold=Infinity''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''flag_column=flag'', ''threshold=1'', ''flag_when=sideways''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''flag_when=below''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''key_column=id''');
SELECT pg_temp.try('''model=' || repeat('m', 64) || ''', ''score_column=s''');
-- the model
SELECT pg_temp.try('''model=nope'', ''score_column=s'', ''features=a,b,c,d''');
SELECT pg_temp.try('''model=tg_wine'', ''score_column=s'', ''features=a,b,c,d''');
SELECT pg_temp.try('''model=tg_bc'', ''score_column=s''');
SELECT pg_temp.try('''model=tg_fraud'', ''score_column=s''');
-- feature columns
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,zz''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,t''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,g''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,"d''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,,d''');
-- score and flag columns
SELECT pg_temp.try('''model=tg_iris'', ''score_column=zz'', ''features=a,b,c,d''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=t'', ''features=a,b,c,d''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=a'', ''features=a,b,c,d''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=g'', ''features=a,b,c,d''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s,flag'', ''features=a,b,c,d''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''flag_column=t'', ''threshold=1''');
SELECT pg_temp.try('''model=tg_iris'', ''score_column=s'', ''features=a,b,c,d'', ''flag_column=s'', ''threshold=1''');
-- a numeric(3,2) score column holds class 2; numeric(1,1) cannot (whatever
-- on_error says)
SELECT pg_temp.try('''model=tg_iris'', ''score_column=n'', ''features=a,b,c,d''');
SELECT n FROM cfg;
SELECT pg_temp.try('''model=tg_iris'', ''score_column=n2'', ''features=a,b,c,d'', ''on_error=null''');
DROP TRIGGER cfg_score ON cfg;
-- a column dropped after the trigger was created
CREATE TRIGGER cfg_score BEFORE INSERT ON cfg FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_iris', 'score_column=s', 'features=a,b,c,d');
ALTER TABLE cfg DROP COLUMN d;
INSERT INTO cfg (id, a, b, c) VALUES (3, 1, 1, 1);
DROP TRIGGER cfg_score ON cfg;
-- the wrong kind of trigger
CREATE TRIGGER cfg_score AFTER INSERT ON cfg FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_iris', 'score_column=s', 'features=a,b,c,t');
INSERT INTO cfg (id, a, b, c) VALUES (3, 1, 1, 1);
DROP TRIGGER cfg_score ON cfg;
CREATE TRIGGER cfg_score BEFORE INSERT ON cfg FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_score_trigger('model=tg_iris', 'score_column=s', 'features=a,b,c,t');
INSERT INTO cfg (id, a, b, c) VALUES (3, 1, 1, 1);
DROP TRIGGER cfg_score ON cfg;
CREATE TRIGGER cfg_score BEFORE DELETE ON cfg FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=tg_iris', 'score_column=s', 'features=a,b,c,t');
DELETE FROM cfg;
DROP TRIGGER cfg_score ON cfg;

--------------------------------------------------------------------------------
-- gpu_alert_trigger
--------------------------------------------------------------------------------

-- Alerts tables need (key bigint, score real, model text, model_version
-- integer, alerted_at timestamptz); other columns may have defaults.
CREATE TABLE fraud_alerts (alert_id bigserial PRIMARY KEY, key bigint, score real,
                           model text, model_version integer, alerted_at timestamptz,
                           reviewed boolean DEFAULT false);

-- COPY fires it too.  Its batch scores agree with the row trigger's.
CREATE TRIGGER alert_tx AFTER INSERT ON transactions REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_alert_trigger('model=tg_fraud', 'key_column=id', 'threshold=0.02',
                                     'alerts_table=fraud_alerts');
DELETE FROM transactions;
COPY transactions (id, amount, hour, merchant_risk, device_age_days, distance_km,
  n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days,
  account_age_days, customer_age, is_foreign, is_online, is_night,
  mcc_risk, ip_risk, failed_logins_7d, chargebacks_1y, velocity_score,
  balance, credit_limit, utilization, days_since_last_tx,
  email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds,
  pos_entry_mode, noise, xgb_score) FROM :'fraud_csv' (FORMAT csv);
SELECT (SELECT count(*) FROM fraud_alerts) AS alerts,
       (SELECT count(*) FROM transactions WHERE is_suspicious) AS flagged_rows,
       (SELECT count(*) FROM transactions t FULL JOIN fraud_alerts a ON a.key = t.id
         WHERE t.is_suspicious AND a.score IS DISTINCT FROM t.fraud_score
            OR NOT t.is_suspicious AND a.key IS NOT NULL) AS disagreeing;
TRUNCATE fraud_alerts;

-- 5000 rows in one INSERT, in batches of 700 rows; feature columns of several
-- types, taken from the model's feature names.
CREATE TABLE payments (
  id bigint PRIMARY KEY,
  amount real, hour integer, merchant_risk real, device_age_days real, distance_km double precision,
  n_tx_1h real, n_tx_24h real, avg_amount_30d real, amount_ratio real, card_age_days real,
  account_age_days real, customer_age smallint, is_foreign boolean, is_online real, is_night real,
  mcc_risk real, ip_risk real, failed_logins_7d real, chargebacks_1y real, velocity_score real,
  balance numeric, credit_limit real, utilization real, days_since_last_tx real,
  email_domain_risk real, addr_mismatch real, n_cards_on_device real, session_seconds real,
  pos_entry_mode real, noise real);
CREATE FUNCTION pay_features(p payments) RETURNS double precision[] LANGUAGE sql AS $$
  SELECT ARRAY[p.amount, p.hour, p.merchant_risk, p.device_age_days, p.distance_km,
    p.n_tx_1h, p.n_tx_24h, p.avg_amount_30d, p.amount_ratio, p.card_age_days,
    p.account_age_days, p.customer_age, p.is_foreign::int, p.is_online, p.is_night,
    p.mcc_risk, p.ip_risk, p.failed_logins_7d, p.chargebacks_1y, p.velocity_score,
    p.balance, p.credit_limit, p.utilization, p.days_since_last_tx,
    p.email_domain_risk, p.addr_mismatch, p.n_cards_on_device, p.session_seconds,
    p.pos_entry_mode, p.noise] $$;
CREATE TRIGGER alert_payments AFTER INSERT ON payments REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_alert_trigger('model=tg_fraud', 'key_column=id', 'threshold=0.02',
                                     'alerts_table=fraud_alerts');
CREATE TEMP TABLE stats_before AS SELECT sum(batches) AS batches, sum(rows) AS rows FROM gpu_engine_stats();
SET pg_gpuscore.batch_size = 700;
INSERT INTO payments
SELECT g, t.amount * (1 + (g % 13) / 4.0), nullif(t.hour, 'NaN')::int, t.merchant_risk,
       t.device_age_days, t.distance_km, t.n_tx_1h, t.n_tx_24h + g % 3, t.avg_amount_30d,
       t.amount_ratio * (1 + (g % 5) / 2.0), t.card_age_days, t.account_age_days,
       nullif(t.customer_age, 'NaN')::smallint, nullif(t.is_foreign, 'NaN') = 1, t.is_online,
       t.is_night, t.mcc_risk, t.ip_risk, t.failed_logins_7d, t.chargebacks_1y,
       t.velocity_score, t.balance::numeric, t.credit_limit, t.utilization,
       t.days_since_last_tx, t.email_domain_risk, t.addr_mismatch, t.n_cards_on_device,
       t.session_seconds, t.pos_entry_mode, t.noise
  FROM generate_series(1, 5000) g JOIN transactions t ON t.id = g % 320;
RESET pg_gpuscore.batch_size;
SELECT s.batches - b.batches AS batches, s.rows - b.rows AS rows
  FROM (SELECT sum(batches) AS batches, sum(rows) AS rows FROM gpu_engine_stats()) s, stats_before b;
-- The alerts are exactly the rows with gpu_score >= threshold, with that score.
SELECT count(*) AS alerts, count(DISTINCT key) AS keys,
       bool_and(model = 'tg_fraud' AND model_version = 1) AS model_recorded,
       bool_and(alerted_at IS NOT NULL) AS alerted_at_set, bool_and(NOT reviewed) AS defaults_kept
  FROM fraud_alerts;
SELECT count(*) FILTER (WHERE p.score >= 0.02::float8 AND a.key IS NULL) AS missing,
       count(*) FILTER (WHERE a.key IS NOT NULL AND NOT p.score >= 0.02::float8) AS extra,
       count(*) FILTER (WHERE a.key IS NOT NULL AND a.score IS DISTINCT FROM p.score) AS wrong_score
  FROM (SELECT id, gpu_score('tg_fraud', pay_features(p)) AS score FROM payments p) p
  LEFT JOIN fraud_alerts a ON a.key = p.id;

-- A replaced model: the next statement records the new version.  A
-- statement inserting nothing inserts no alerts.
SELECT gpu_load_model('tg_fraud', pg_read_binary_file(:'m_fraud')) AS fraud_version;
INSERT INTO payments SELECT id + 10000, amount, hour, merchant_risk, device_age_days, distance_km,
       n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days, account_age_days,
       customer_age, is_foreign, is_online, is_night, mcc_risk, ip_risk, failed_logins_7d,
       chargebacks_1y, velocity_score, balance, credit_limit, utilization, days_since_last_tx,
       email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds, pos_entry_mode, noise
  FROM payments WHERE id IN (SELECT key FROM fraud_alerts ORDER BY key LIMIT 3);
INSERT INTO payments SELECT * FROM payments WHERE false;
SELECT key, model, model_version FROM fraud_alerts WHERE key > 10000 ORDER BY key;

-- NULL keys are kept; on_error=null skips rows that cannot be scored, with
-- one WARNING per statement giving their number.
CREATE TABLE sensor (id int, a real, b double precision, c numeric, d real);
CREATE TABLE iris_alerts (key bigint, score real, model text, model_version integer,
                          alerted_at timestamptz);
CREATE TRIGGER alert_sensor AFTER INSERT ON sensor REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_alert_trigger('model=tg_iris', 'key_column=id', 'threshold=2',
                                     'alerts_table=public.iris_alerts', 'features=a,b,c,d',
                                     'on_error=null');
INSERT INTO sensor VALUES (1, 6.7, 3.0, 5.2, 2.3), (NULL, 6.7, 3.0, 5.2, 2.3),
  (2, 5.1, 3.5, 1.4, 0.2), (3, 6.7, 'Infinity', 5.2, 2.3), (4, 6.7, 3.0, 1e300, 2.3);
SELECT key, score, model FROM iris_alerts ORDER BY key;
-- The same over 200 rows (the batch is built in blocks of 64 rows): the rows that cannot be
-- scored are skipped wherever they fall, every other row is alerted with its own score.
INSERT INTO sensor SELECT g, 6.7, CASE WHEN g % 37 = 0 THEN 'Infinity' ELSE 3.0 END, 5.2, 2.3
  FROM generate_series(100, 299) g;
SELECT count(*) AS alerted,
       count(*) FILTER (WHERE a.score IS DISTINCT FROM gpu_score('tg_iris', ARRAY[s.a, s.b, s.c, s.d]::real[])) AS wrong_score
  FROM iris_alerts a JOIN sensor s ON s.id = a.key WHERE a.key BETWEEN 100 AND 299;
-- on_error=error (the default): the statement fails, naming the row's key.
CREATE OR REPLACE TRIGGER alert_sensor AFTER INSERT ON sensor REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_alert_trigger('model=tg_iris', 'key_column=id', 'threshold=2',
                                     'alerts_table=iris_alerts', 'features=a,b,c,d');
INSERT INTO sensor VALUES (5, 6.7, 3.0, 5.2, 2.3), (6, 6.7, '-Infinity', 5.2, 2.3);
SELECT count(*) FROM sensor;

-- The user inserting needs INSERT on the alerts table (checked at the first
-- fire, even when nothing is alerted).
CREATE ROLE gs_clerk;
GRANT INSERT ON sensor TO gs_clerk;
SET ROLE gs_clerk;
INSERT INTO sensor VALUES (7, 5.1, 3.5, 1.4, 0.2);
RESET ROLE;
GRANT INSERT ON iris_alerts TO gs_clerk;
SET ROLE gs_clerk;
INSERT INTO sensor VALUES (7, 6.7, 3.0, 5.2, 2.3);
RESET ROLE;
SELECT key, score FROM iris_alerts WHERE key = 7;
DROP TABLE sensor;
REVOKE ALL ON iris_alerts FROM gs_clerk;
DROP ROLE gs_clerk;

-- Configuration errors of the alert trigger.
CREATE TABLE src (id bigint, name text, a real, b real, c real, d real);
CREATE TABLE bad_alerts (key bigint, score real, model text);
CREATE FUNCTION pg_temp.try_alert(args text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE OR REPLACE TRIGGER src_alert AFTER INSERT ON src '
                 'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT '
                 'EXECUTE FUNCTION gpu_alert_trigger(%s)', args);
  INSERT INTO src VALUES (1, 'x', 6.7, 3.0, 5.2, 2.3);
  RAISE NOTICE 'no error';
END $$;
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''threshold=2'', ''alerts_table=iris_alerts'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''alerts_table=iris_alerts'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''alerts_table=iris_alerts'', ''features=a,b,c,d'', ''score_column=s''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=name'', ''threshold=2'', ''alerts_table=iris_alerts'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=nope'', ''threshold=2'', ''alerts_table=iris_alerts'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''alerts_table=iris_alerts'', ''features=a,b,c,name''');
SELECT pg_temp.try_alert('''model=nope'', ''key_column=id'', ''threshold=2'', ''alerts_table=iris_alerts'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_bc'', ''key_column=id'', ''threshold=2'', ''alerts_table=iris_alerts''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''alerts_table=no_alerts'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''alerts_table=no such table'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''alerts_table=bad_alerts'', ''features=a,b,c,d''');
ALTER TABLE bad_alerts ADD COLUMN model_version integer, ADD COLUMN alerted_at timestamp;
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''alerts_table=bad_alerts'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''alerts_table=src'', ''features=a,b,c,d''');
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''alerts_table=gpu_models'', ''features=a,b,c,d''');
-- (even when the statement inserts no rows)
CREATE TRIGGER src_alert AFTER INSERT ON src REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_alert_trigger('model=tg_iris', 'key_column=id', 'threshold=2',
                                     'alerts_table=iris_alerts', 'features=a,b,c,zz');
INSERT INTO src SELECT * FROM src WHERE false;
DROP TRIGGER src_alert ON src;
-- and a valid one
SELECT pg_temp.try_alert('''model=tg_iris'', ''key_column=id'', ''threshold=2'', ''alerts_table=iris_alerts'', ''features=a,b,c,d''');
DROP TRIGGER src_alert ON src;
-- the wrong kind of trigger
CREATE TRIGGER src_alert AFTER INSERT ON src FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_alert_trigger('model=tg_iris', 'key_column=id', 'threshold=2',
                                     'alerts_table=iris_alerts', 'features=a,b,c,d');
INSERT INTO src VALUES (2, 'x', 6.7, 3.0, 5.2, 2.3);
DROP TRIGGER src_alert ON src;
CREATE TRIGGER src_alert AFTER INSERT ON src REFERENCING NEW TABLE AS new_rows FOR EACH ROW
  EXECUTE FUNCTION gpu_alert_trigger('model=tg_iris', 'key_column=id', 'threshold=2',
                                     'alerts_table=iris_alerts', 'features=a,b,c,d');
INSERT INTO src VALUES (2, 'x', 6.7, 3.0, 5.2, 2.3);
DROP TRIGGER src_alert ON src;
CREATE TRIGGER src_alert BEFORE INSERT ON src FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_alert_trigger('model=tg_iris', 'key_column=id', 'threshold=2',
                                     'alerts_table=iris_alerts', 'features=a,b,c,d');
INSERT INTO src VALUES (2, 'x', 6.7, 3.0, 5.2, 2.3);
DROP TRIGGER src_alert ON src;
CREATE TRIGGER src_alert AFTER UPDATE ON src REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_alert_trigger('model=tg_iris', 'key_column=id', 'threshold=2',
                                     'alerts_table=iris_alerts', 'features=a,b,c,d');
UPDATE src SET a = 1;
DROP TRIGGER src_alert ON src;
-- trigger functions cannot be called directly
SELECT gpu_alert_trigger();

-- The GPU path, tested without a GPU: with the CPU mock of the GPU provider
-- (see gpu_engine.sql) and pg_gpuscore.device = 'gpu', every batch goes
-- through the two-slot pipeline; the alerts are the same.
\set mock :abs_srcdir '/tests/mock_provider/pg_gpuscore_mock_provider.so'
\c
-- (the session's own provider, whose device memory gpu_device_info shows; through the GPU
-- service, which holds the models of every session, see gpu_service.sql)
SET pg_gpuscore.provider = :'mock';
SET pg_gpuscore.gpu_service = off;
SET pg_gpuscore.device = 'gpu';
SET pg_gpuscore.batch_size = 700;
CREATE FUNCTION gpu_used_mib() RETURNS bigint LANGUAGE sql AS
$$SELECT (total_memory - free_memory) >> 20 FROM gpu_device_info()$$;
INSERT INTO payments SELECT id + 100000, amount, hour, merchant_risk, device_age_days, distance_km,
       n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days, account_age_days,
       customer_age, is_foreign, is_online, is_night, mcc_risk, ip_risk, failed_logins_7d,
       chargebacks_1y, velocity_score, balance, credit_limit, utilization, days_since_last_tx,
       email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds, pos_entry_mode, noise
  FROM payments WHERE id <= 5000;
SELECT engine, batches, rows FROM gpu_engine_stats() ORDER BY engine;
SELECT count(*) FILTER (WHERE p.score >= 0.02::float8 AND a.key IS NULL) AS missing,
       count(*) FILTER (WHERE a.key IS NOT NULL AND NOT p.score >= 0.02::float8) AS extra,
       count(*) FILTER (WHERE a.key IS NOT NULL AND a.score IS DISTINCT FROM p.score) AS wrong_score,
       count(a.key) AS alerts
  FROM (SELECT id, gpu_score('tg_fraud', pay_features(p)) AS score FROM payments p
         WHERE id > 100000) p
  LEFT JOIN fraud_alerts a ON a.key = p.id;
-- An error in the middle of the statement (in the 5th batch) frees the
-- pipeline; the model stays on the device.
SELECT gpu_used_mib() AS mib_in_use;
INSERT INTO payments SELECT id + 200000, CASE WHEN id = 3000 THEN 'Infinity' ELSE amount END,
       hour, merchant_risk, device_age_days, distance_km,
       n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days, account_age_days,
       customer_age, is_foreign, is_online, is_night, mcc_risk, ip_risk, failed_logins_7d,
       chargebacks_1y, velocity_score, balance, credit_limit, utilization, days_since_last_tx,
       email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds, pos_entry_mode, noise
  FROM payments WHERE id <= 5000 ORDER BY id;
SELECT gpu_used_mib() AS mib_in_use;
RESET pg_gpuscore.device;
RESET pg_gpuscore.batch_size;
DROP FUNCTION gpu_used_mib();

-- Nothing is left behind: configurations and model holds end with their
-- statement.
SELECT count(*) AS trigger_contexts FROM pg_backend_memory_contexts
 WHERE name IN ('pg_gpuscore score trigger', 'pg_gpuscore alert trigger');

\set SHOW_CONTEXT errors
DROP FUNCTION tx_features(transactions), patient_features(patients),
              patient_features_reversed(patients), pay_features(payments);
DROP TABLE flowers, transactions, patients, measurements, cfg, fraud_alerts, payments,
           iris_alerts, src, bad_alerts;
SELECT gpu_drop_model(name) FROM unnest(ARRAY['tg_fraud', 'tg_bc', 'tg_iris', 'tg_wine', 'tg_swap']) AS name;
