-- Feature columns are read by position, in model order.  Where the model
-- names its features (gpu_models.feature_names; a model trained on a
-- DataFrame does), a column named like a feature other than the one in its
-- place means the columns are out of order: an ERROR (22023), as XGBoost and
-- scikit-learn refuse such data, instead of scores of swapped features.
-- Columns whose names are no feature's name (expressions, other names) are
-- read by position as before, and so are LightGBM's made-up names.  The model is the demo fraud model, its rows
-- and XGBoost's scores from tests/fixtures/cases/demo_fraud.csv.
\getenv abs_srcdir PG_ABS_SRCDIR
\set m_fraud :abs_srcdir '/tests/fixtures/models/demo_fraud.ubj'
\set fraud_csv :abs_srcdir '/tests/fixtures/cases/demo_fraud.csv'
SELECT gpu_load_model('fraud', pg_read_binary_file(:'m_fraud')) > 0 AS loaded;
SELECT feature_names[1:4] AS first_features FROM gpu_models WHERE name = 'fraud';

\set cols 'amount, hour, merchant_risk, device_age_days, distance_km, n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days, account_age_days, customer_age, is_foreign, is_online, is_night, mcc_risk, ip_risk, failed_logins_7d, chargebacks_1y, velocity_score, balance, credit_limit, utilization, days_since_last_tx, email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds, pos_entry_mode, noise'
-- the same columns with amount and hour swapped
\set swapped 'hour, amount, merchant_risk, device_age_days, distance_km, n_tx_1h, n_tx_24h, avg_amount_30d, amount_ratio, card_age_days, account_age_days, customer_age, is_foreign, is_online, is_night, mcc_risk, ip_risk, failed_logins_7d, chargebacks_1y, velocity_score, balance, credit_limit, utilization, days_since_last_tx, email_domain_risk, addr_mismatch, n_cards_on_device, session_seconds, pos_entry_mode, noise'
CREATE TABLE payments (id bigint PRIMARY KEY,
  amount real, hour real, merchant_risk real, device_age_days real, distance_km real,
  n_tx_1h real, n_tx_24h real, avg_amount_30d real, amount_ratio real, card_age_days real,
  account_age_days real, customer_age real, is_foreign real, is_online real, is_night real,
  mcc_risk real, ip_risk real, failed_logins_7d real, chargebacks_1y real, velocity_score real,
  balance real, credit_limit real, utilization real, days_since_last_tx real,
  email_domain_risk real, addr_mismatch real, n_cards_on_device real, session_seconds real,
  pos_entry_mode real, noise real, xgb_score real, score real);
COPY payments (id, :cols, xgb_score) FROM :'fraud_csv' (FORMAT csv);

-- In model order: XGBoost's scores
SELECT count(*) AS n, count(*) FILTER (WHERE abs(q.score - p.xgb_score) > 1e-6) AS differ_from_xgboost
  FROM gpu_score_query('fraud', 'SELECT id, ' || :'cols' || ' FROM payments') q JOIN payments p USING (id);

-- amount and hour swapped: refused
SELECT * FROM gpu_score_query('fraud', 'SELECT id, ' || :'swapped' || ' FROM payments');
-- what it would have scored (the same swap under names that are no
-- feature's): most scores differ from XGBoost's
SELECT count(*) FILTER (WHERE abs(q.score - p.xgb_score) > 1e-6) > 100 AS most_differ
  FROM gpu_score_query('fraud', 'SELECT id, hour AS h, amount AS a, ' ||
                       substr(:'cols', length('amount, hour, ') + 1) || ' FROM payments') q
  JOIN payments p USING (id);
-- the same column twice is refused too
SELECT * FROM gpu_score_query('fraud', 'SELECT id, amount, amount, ' ||
                              substr(:'cols', length('amount, hour, ') + 1) || ' FROM payments');
-- names are compared as the libraries write them, and without regard to
-- case where only one feature matches: "Hour" in amount's place is refused,
-- "AMOUNT" in its own place is read
SELECT * FROM gpu_score_query('fraud', 'SELECT id, hour AS "Hour", amount AS h, ' ||
                              substr(:'cols', length('amount, hour, ') + 1) || ' FROM payments');
SELECT count(*) AS n FROM gpu_score_query('fraud', 'SELECT id, amount AS "AMOUNT", ' ||
                                          substr(:'cols', length('amount, ') + 1) || ' FROM payments');
-- gpu_predict_query and gpu_explain_query read columns the same way
SELECT * FROM gpu_predict_query('fraud', 'SELECT id, ' || :'swapped' || ' FROM payments');
SELECT * FROM gpu_explain_query('fraud', 'SELECT id, ' || :'swapped' || ' FROM payments', 3);

-- Triggers: the features argument lists the columns in model order (without
-- it the model's feature names are the columns)
\set f_swapped 'features=' :swapped
\set f_cols 'features=' :cols
CREATE TRIGGER score_swapped BEFORE INSERT ON payments FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=fraud', 'score_column=score',
                                     :'f_swapped');
INSERT INTO payments (id, :cols) SELECT id + 1000, :cols FROM payments WHERE id = 1;
DROP TRIGGER score_swapped ON payments;
CREATE TRIGGER score_in_order BEFORE INSERT ON payments FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=fraud', 'score_column=score',
                                     :'f_cols');
INSERT INTO payments (id, :cols) SELECT id + 1000, :cols FROM payments WHERE id = 1;
SELECT n.score = o.xgb_score AS as_xgboost FROM payments n JOIN payments o ON o.id = n.id - 1000 WHERE n.id = 1001;
DROP TRIGGER score_in_order ON payments;

-- gpu_score_table (scheduled scoring): the features argument likewise
CALL gpu_score_table('fraud', 'payments', 'id',
                     features => string_to_array(replace(:'swapped', ' ', ''), ',')::name[]);
SET client_min_messages = warning;
CALL gpu_score_table('fraud', 'payments', 'id',
                     features => string_to_array(replace(:'cols', ' ', ''), ',')::name[]);
RESET client_min_messages;
SELECT count(*) AS n, count(*) FILTER (WHERE abs(score - xgb_score) > 1e-6) AS differ_from_xgboost
  FROM payments WHERE id < 1000;

-- LightGBM names features it was not given names for Column_0, Column_1, ...:
-- such names say nothing of the columns, so columns column_1 .. column_10 (a
-- numbering from 1) are read by position, not refused
SELECT gpu_load_model('lgb_unnamed', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/lgb_binary.txt')) > 0 AS loaded;
SELECT feature_names[1:3] AS made_up FROM gpu_models WHERE name = 'lgb_unnamed';
SELECT count(*) AS scored
  FROM gpu_score_query('lgb_unnamed', 'SELECT 1, 0.5 AS column_1, 1 AS column_2, 2 AS column_3, 0 AS column_4,
                        1 AS column_5, 3 AS column_6, 0.1 AS column_7, 0.2 AS column_8, 1 AS column_9, 2 AS column_10');
CREATE TABLE unnamed_rows (id bigint PRIMARY KEY, column_1 real, column_2 real, column_3 real,
  column_4 real, column_5 real, column_6 real, column_7 real, column_8 real, column_9 real,
  column_10 real, score real);
INSERT INTO unnamed_rows SELECT g, g % 3, g % 5, g % 7, 0, 1, g % 2, 0.5, 0.25, 1, g % 4 FROM generate_series(1, 20) g;
SET client_min_messages = warning;
CALL gpu_score_table('lgb_unnamed', 'unnamed_rows', 'id',
                     features => ARRAY['column_1', 'column_2', 'column_3', 'column_4', 'column_5',
                                       'column_6', 'column_7', 'column_8', 'column_9', 'column_10']::name[]);
RESET client_min_messages;
SELECT count(score) AS scored FROM unnamed_rows;
DROP TABLE unnamed_rows;
SELECT gpu_drop_model('lgb_unnamed');

DROP TABLE payments;
SELECT gpu_drop_model('fraud');
