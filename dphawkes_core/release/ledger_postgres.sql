-- The dphawkes privacy ledger in PostgreSQL (schema version 2), installed by `dphawkes ledger init URL` as the data
-- owner's role, which owns everything below. dphawkes_core/release/ledger_postgres.py reads and writes it; the
-- rights (docs/privacy.md, "A ledger for a team"):
--   * the owner's role owns the tables: it alone sets budgets and public marks (INSERT/UPDATE on data_sets);
--   * an analyst's role may read every table and call the five functions below marked ANALYST (SECURITY DEFINER,
--     owned by the owner): a release is recorded only through charge(), which locks the data set's row and checks
--     the budget inside the database before it records the spend — a release over the budget is refused even to
--     SQL written by hand; a charged release is settled only by the role that charged it (version 2);
--   * every change of a budget or a public mark is recorded in `changes` by a trigger, with the database role that
--     made it (session_user: the login role, also inside a SECURITY DEFINER function), the OS user its client stated
--     and the time.
-- The budget check composes in the database as the program does: Gaussian noise alone as one Gaussian (μ² adds up;
-- exact, against the μ of the budget, computed by a trigger when the budget is set); any other mechanism in zCDP
-- (ρ adds up, against the ρ of the budget): an upper bound on the exact composition, so near the budget the database
-- may refuse a release that the program's privacy-loss-distribution composition would allow, never the reverse.

CREATE SCHEMA IF NOT EXISTS dphawkes_ledger;

CREATE TABLE IF NOT EXISTS dphawkes_ledger.meta (
    version integer NOT NULL
);

CREATE TABLE IF NOT EXISTS dphawkes_ledger.data_sets (
    fingerprint text PRIMARY KEY,
    label text NOT NULL DEFAULT '',
    budget_epsilon double precision NOT NULL CHECK (budget_epsilon > 0 AND budget_epsilon <= 1e4),
    budget_delta double precision NOT NULL CHECK (budget_delta > 0 AND budget_delta < 1),
    budget_mu double precision,   -- the μ whose Gaussian is (budget_epsilon, budget_delta)-DP: set by a trigger
    budget_rho double precision,  -- the largest ρ-zCDP that converts to (budget_epsilon, budget_delta): likewise
    public_mark jsonb,            -- {"created", "tool", "note"} when marked public (already published data)
    migrated text[] NOT NULL DEFAULT '{}',
    version bigint NOT NULL DEFAULT 0  -- bumped by every act on the data set: its row lock orders them
);

CREATE TABLE IF NOT EXISTS dphawkes_ledger.entries (
    seq bigserial,
    fingerprint text NOT NULL REFERENCES dphawkes_ledger.data_sets,
    request text NOT NULL,
    label text NOT NULL,
    formal boolean NOT NULL,
    reasons jsonb NOT NULL,
    mechanisms jsonb NOT NULL,
    result text NOT NULL DEFAULT '{}',  -- JSON as the program writes it (non-finite numbers kept)
    created text NOT NULL,
    unit text NOT NULL CHECK (unit IN ('event', 'sequence')),
    max_events integer CHECK (max_events >= 1),
    state text NOT NULL CHECK (state IN ('charged', 'released', 'failed')),
    recorded_by name NOT NULL DEFAULT session_user,
    PRIMARY KEY (fingerprint, request)
);

CREATE TABLE IF NOT EXISTS dphawkes_ledger.looks (
    seq bigserial,
    fingerprint text NOT NULL REFERENCES dphawkes_ledger.data_sets,
    created text NOT NULL,
    tool text NOT NULL,
    what text NOT NULL,
    recorded_by name NOT NULL DEFAULT session_user,
    PRIMARY KEY (fingerprint, tool, what)
);

CREATE TABLE IF NOT EXISTS dphawkes_ledger.promises (
    fingerprint text PRIMARY KEY REFERENCES dphawkes_ledger.data_sets,
    created text NOT NULL,
    tool text NOT NULL,
    note text NOT NULL DEFAULT '',
    recorded_by name NOT NULL DEFAULT session_user
);

CREATE TABLE IF NOT EXISTS dphawkes_ledger.changes (
    seq bigserial PRIMARY KEY,
    fingerprint text NOT NULL,
    created text NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'),
    tool text NOT NULL DEFAULT coalesce(nullif(current_setting('dphawkes.tool', true), ''), 'sql'),
    role name NOT NULL DEFAULT session_user,
    os_user text NOT NULL DEFAULT coalesce(current_setting('dphawkes.os_user', true), ''),
    who text,  -- who made a change copied from another ledger (NULL: made here, by `role`)
    what text NOT NULL
);

-- ---------------------------------------------------------------------------------------------------------------
-- The arithmetic: log Φ, the Gaussian's δ(ε), the budget's μ and ρ, a release's cost in a view.

-- e^v, 0 where it underflows (PostgreSQL's exp() raises an error there).
CREATE OR REPLACE FUNCTION dphawkes_ledger.exp_or_zero(v double precision) RETURNS double precision
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN v < -700 THEN 0::double precision ELSE exp(v) END
$$;

-- log Φ(x), the standard normal CDF: its power series on [−3, 5] (relative error < 1e-12), Laplace's continued
-- fraction of the tail below −3 (100 terms, evaluated from the end: < 1e-13), 1 − Φ(−x) above 5.
CREATE OR REPLACE FUNCTION dphawkes_ledger.log_normal_cdf(x double precision) RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    term double precision;
    total double precision;
    fraction double precision;
    n integer := 0;
BEGIN
    IF x > 5 THEN
        RETURN ln(1 - dphawkes_ledger.exp_or_zero(dphawkes_ledger.log_normal_cdf(-x)));
    END IF;
    IF x >= -3 THEN
        term := x;
        total := x;
        LOOP
            n := n + 1;
            term := term * x * x / (2 * n + 1);
            total := total + term;
            EXIT WHEN abs(term) <= 1e-17 * abs(total) OR n > 400;
        END LOOP;
        RETURN ln(0.5 + exp(-x * x / 2 - 0.91893853320467274178) * total);
    END IF;
    fraction := -x;
    FOR n IN REVERSE 100..1 LOOP
        fraction := -x + n / fraction;
    END LOOP;
    RETURN -x * x / 2 - 0.91893853320467274178 - ln(fraction);
END $$;

-- δ(ε) of a μ-GDP mechanism: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018), the second term in logs.
CREATE OR REPLACE FUNCTION dphawkes_ledger.gaussian_delta(epsilon double precision, mu double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN mu <= 0 THEN 0::double precision ELSE
        dphawkes_ledger.exp_or_zero(dphawkes_ledger.log_normal_cdf(-epsilon / mu + mu / 2))
        - dphawkes_ledger.exp_or_zero(epsilon + dphawkes_ledger.log_normal_cdf(-epsilon / mu - mu / 2)) END
$$;

-- The largest μ whose Gaussian is (ε, δ)-DP: bisection on δ(ε; μ), increasing in μ (to float precision, from below).
CREATE OR REPLACE FUNCTION dphawkes_ledger.budget_mu(epsilon double precision, delta double precision)
RETURNS double precision LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    low double precision := 0;
    high double precision := 1;
    middle double precision;
BEGIN
    WHILE dphawkes_ledger.gaussian_delta(epsilon, high) <= delta LOOP
        low := high;
        high := high * 2;
    END LOOP;
    FOR i IN 1..200 LOOP
        middle := (low + high) / 2;
        EXIT WHEN middle <= low OR middle >= high;
        IF dphawkes_ledger.gaussian_delta(epsilon, middle) <= delta THEN low := middle; ELSE high := middle; END IF;
    END LOOP;
    RETURN low;
END $$;

-- ε at δ from ρ-zCDP at the Rényi order α: αρ + log(1 − 1/α) − (log δ + log α)/(α − 1) (Canonne, Kamath &
-- Steinke 2020, Prop. 12), linear in ρ: ρ-zCDP is (ε, δ)-DP iff ρ ≤ (ε − log(1 − 1/α) + (log δ + log α)/(α − 1))/α
-- for some α. The largest such ρ: that bound maximised over α (a grid over log(α − 1), then golden sections).
CREATE OR REPLACE FUNCTION dphawkes_ledger.rho_at_order(epsilon double precision, delta double precision,
                                                       log_order double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (epsilon - ln(1 - 1 / (1 + exp(log_order))) + (ln(delta) + ln(1 + exp(log_order))) / exp(log_order))
           / (1 + exp(log_order))
$$;

CREATE OR REPLACE FUNCTION dphawkes_ledger.budget_rho(epsilon double precision, delta double precision)
RETURNS double precision LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    best double precision := -1e308;
    best_at double precision := 0;
    value double precision;
    low double precision;
    high double precision;
    left_point double precision;
    right_point double precision;
    golden constant double precision := 0.6180339887498949;
BEGIN
    FOR i IN 0..450 LOOP
        value := dphawkes_ledger.rho_at_order(epsilon, delta, -20 + i * 0.1);
        IF value > best THEN best := value; best_at := -20 + i * 0.1; END IF;
    END LOOP;
    low := best_at - 0.1;
    high := best_at + 0.1;
    FOR i IN 1..100 LOOP
        left_point := high - golden * (high - low);
        right_point := low + golden * (high - low);
        IF dphawkes_ledger.rho_at_order(epsilon, delta, left_point)
           >= dphawkes_ledger.rho_at_order(epsilon, delta, right_point) THEN
            high := right_point;
        ELSE
            low := left_point;
        END IF;
    END LOOP;
    RETURN greatest(best, dphawkes_ledger.rho_at_order(epsilon, delta, (low + high) / 2), 0);
END $$;

-- How many of the neighbours a release was calibrated for one neighbour of `view` moves (group privacy): 1 for a
-- sequence-level release, or an uncapped event-level one in the event view; under an enforced cap M, 2 in the event
-- view (a swap) and 2M in the sequence view; unbounded (∞) for an uncapped event-level release per sequence.
CREATE OR REPLACE FUNCTION dphawkes_ledger.group_factor(unit text, max_events integer, view text)
RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN unit = 'sequence' OR (max_events IS NULL AND view = 'event') THEN 1::double precision
                WHEN max_events IS NULL THEN 'Infinity'::double precision
                WHEN view = 'event' THEN 2::double precision
                ELSE 2::double precision * max_events END
$$;

-- A list of mechanisms as the program stores them ([{"kind", "parameter", "releases", "label"}]), refused unless
-- every one is of a known kind with a positive finite parameter and a whole number of releases ≥ 1.
CREATE OR REPLACE FUNCTION dphawkes_ledger.checked_mechanisms(mechanisms jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    m jsonb;
BEGIN
    IF mechanisms IS NULL OR jsonb_typeof(mechanisms) <> 'array' THEN
        RAISE EXCEPTION USING ERRCODE = 'DPR01', MESSAGE = 'refused by the database: the mechanisms must be a '
            'JSON array of {"kind", "parameter", "releases"}';
    END IF;
    FOR m IN SELECT * FROM jsonb_array_elements(mechanisms) LOOP
        IF jsonb_typeof(m) <> 'object' OR m->>'kind' IS NULL
           OR m->>'kind' NOT IN ('gaussian', 'discrete-gaussian', 'laplace', 'pure')
           OR jsonb_typeof(m->'parameter') <> 'number' OR (m->>'parameter')::double precision <= 0
           OR (m->>'parameter')::double precision >= 'Infinity'::double precision
           OR jsonb_typeof(m->'releases') <> 'number' OR (m->>'releases')::numeric < 1
           OR (m->>'releases')::numeric <> trunc((m->>'releases')::numeric) THEN
            RAISE EXCEPTION USING ERRCODE = 'DPR01', MESSAGE = format('refused by the database: %s is not a '
                'mechanism (a kind of gaussian, discrete-gaussian, laplace or pure, a positive parameter and a '
                'whole number of releases >= 1)', m);
        END IF;
    END LOOP;
    RETURN mechanisms;
END $$;

-- What mechanisms cost one neighbour of a view, a group of `factor` of their own neighbours: μ² of the Gaussians
-- (noise multipliers divided by the factor), ρ of everything (Gaussian and discrete Gaussian 1/(2z²), Laplace and
-- pure steps ε²/2: Bun & Steinke 2016, Prop. 3.3), and whether they are all Gaussian.
CREATE OR REPLACE FUNCTION dphawkes_ledger.cost(mechanisms jsonb, factor double precision,
                                               OUT mu_sq double precision, OUT rho double precision,
                                               OUT gaussian_only boolean)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    m jsonb;
    kind text;
    parameter double precision;
    releases double precision;
    epsilon double precision;
BEGIN
    mu_sq := 0;
    rho := 0;
    gaussian_only := true;
    FOR m IN SELECT * FROM jsonb_array_elements(mechanisms) LOOP
        kind := m->>'kind';
        parameter := (m->>'parameter')::double precision;
        releases := (m->>'releases')::double precision;
        IF kind = 'pure' THEN
            epsilon := parameter * factor;
            rho := rho + releases * epsilon * epsilon / 2;
            gaussian_only := false;
        ELSE
            parameter := parameter / factor;  -- a noise multiplier or Laplace scale over the group's sensitivity
            rho := rho + releases / (2 * parameter * parameter);
            IF kind = 'gaussian' THEN
                mu_sq := mu_sq + releases / (parameter * parameter);
            ELSE
                gaussian_only := false;
            END IF;
        END IF;
    END LOOP;
END $$;

-- ---------------------------------------------------------------------------------------------------------------
-- The budget's μ and ρ, always recomputed from (ε, δ) when either (or μ, ρ themselves) change.

CREATE OR REPLACE FUNCTION dphawkes_ledger.set_budget_parameters() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.budget_epsilon IS DISTINCT FROM OLD.budget_epsilon
       OR NEW.budget_delta IS DISTINCT FROM OLD.budget_delta OR NEW.budget_mu IS DISTINCT FROM OLD.budget_mu
       OR NEW.budget_rho IS DISTINCT FROM OLD.budget_rho THEN
        NEW.budget_mu := dphawkes_ledger.budget_mu(NEW.budget_epsilon, NEW.budget_delta);
        NEW.budget_rho := dphawkes_ledger.budget_rho(NEW.budget_epsilon, NEW.budget_delta);
    END IF;
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS budget_parameters ON dphawkes_ledger.data_sets;
CREATE TRIGGER budget_parameters BEFORE INSERT OR UPDATE ON dphawkes_ledger.data_sets
    FOR EACH ROW EXECUTE FUNCTION dphawkes_ledger.set_budget_parameters();

-- Every change of a budget or a public mark, recorded with who made it and when.
CREATE OR REPLACE FUNCTION dphawkes_ledger.record_setting_change() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.budget_epsilon IS DISTINCT FROM OLD.budget_epsilon
       OR NEW.budget_delta IS DISTINCT FROM OLD.budget_delta THEN
        INSERT INTO dphawkes_ledger.changes (fingerprint, what)
        VALUES (NEW.fingerprint, format('budget ε = %s, δ = %s', NEW.budget_epsilon, NEW.budget_delta));
    END IF;
    IF (TG_OP = 'INSERT' AND NEW.public_mark IS NOT NULL)
       OR (TG_OP = 'UPDATE' AND NEW.public_mark IS DISTINCT FROM OLD.public_mark) THEN
        INSERT INTO dphawkes_ledger.changes (fingerprint, what)
        VALUES (NEW.fingerprint, CASE WHEN NEW.public_mark IS NULL THEN 'public mark withdrawn'
                                      WHEN coalesce(NEW.public_mark->>'note', '') = '' THEN 'marked public'
                                      ELSE format('marked public (note: %s)', NEW.public_mark->>'note') END);
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS setting_changes ON dphawkes_ledger.data_sets;
CREATE TRIGGER setting_changes AFTER INSERT OR UPDATE ON dphawkes_ledger.data_sets
    FOR EACH ROW EXECUTE FUNCTION dphawkes_ledger.record_setting_change();

-- ---------------------------------------------------------------------------------------------------------------
-- The analysts' acts (ANALYST: EXECUTE granted to the analysts' roles). Each locks the data set's row first (an
-- UPDATE: a transaction whose snapshot is older than another act's commit fails to serialise instead of reading a
-- stale ledger).

CREATE OR REPLACE FUNCTION dphawkes_ledger.now_text() RETURNS text LANGUAGE sql STABLE AS $$
    SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"')
$$;

CREATE OR REPLACE FUNCTION dphawkes_ledger.locked(p_fingerprint text) RETURNS dphawkes_ledger.data_sets
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    data_set dphawkes_ledger.data_sets;
BEGIN
    UPDATE dphawkes_ledger.data_sets SET version = version + 1 WHERE fingerprint = p_fingerprint
        RETURNING * INTO data_set;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'DPN01', MESSAGE = 'refused by the database: no budget has been set for '
            'these rows in this ledger; the data owner sets one first (dphawkes ledger budget LEDGER DATA --epsilon '
            'E)';
    END IF;
    RETURN data_set;
END $$;

-- ANALYST: lock a data set's row for the rest of the transaction (the program reads its ledger under this lock).
CREATE OR REPLACE FUNCTION dphawkes_ledger.lock_data_set(p_fingerprint text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM dphawkes_ledger.locked(p_fingerprint);
    RETURN true;
EXCEPTION WHEN SQLSTATE 'DPN01' THEN
    RETURN false;
END $$;

-- ANALYST: charge a release before its draw. An earlier entry of the same request answers it (replayed: a formal
-- one in any state, a released one); otherwise a formal release is checked — not on data marked public, not past
-- the per-person promise, not in a closed view, not over the budget in either view — and recorded as charged (an
-- earlier non-formal entry that holds no release is replaced). Returns (replayed, created).
CREATE OR REPLACE FUNCTION dphawkes_ledger.charge(p_fingerprint text, p_request text, p_label text, p_formal boolean,
                                                 p_reasons jsonb, p_mechanisms jsonb, p_unit text,
                                                 p_max_events integer, OUT replayed boolean, OUT created text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    data_set dphawkes_ledger.data_sets;
    earlier dphawkes_ledger.entries;
BEGIN
    data_set := dphawkes_ledger.locked(p_fingerprint);
    PERFORM dphawkes_ledger.checked_mechanisms(p_mechanisms);
    IF p_unit IS NULL OR p_unit NOT IN ('event', 'sequence') OR p_formal IS NULL OR p_request IS NULL
       OR (p_unit = 'sequence' AND p_max_events IS NOT NULL) OR p_max_events < 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'DPR01', MESSAGE = 'refused by the database: a release needs a request, '
            'formal true or false, a unit (event or sequence) and, for an event-level release only, a cap >= 1';
    END IF;
    SELECT * INTO earlier FROM dphawkes_ledger.entries e WHERE e.fingerprint = p_fingerprint
        AND e.request = p_request;
    IF FOUND AND (earlier.formal OR earlier.state = 'released') THEN
        replayed := true;
        created := earlier.created;
        RETURN;
    END IF;
    IF p_formal THEN
        PERFORM dphawkes_ledger.check_release(data_set, p_mechanisms, p_unit, p_max_events);
    END IF;
    DELETE FROM dphawkes_ledger.entries e WHERE e.fingerprint = p_fingerprint AND e.request = p_request;
    replayed := false;
    created := dphawkes_ledger.now_text();
    INSERT INTO dphawkes_ledger.entries (fingerprint, request, label, formal, reasons, mechanisms, created, unit,
                                         max_events, state)
    VALUES (p_fingerprint, p_request, coalesce(p_label, ''), p_formal, coalesce(p_reasons, '[]'), p_mechanisms,
            created, p_unit, p_max_events, 'charged');
END $$;

-- The checks of a formal release against the stored ledger (the program's DataLedger.check, a second time).
CREATE OR REPLACE FUNCTION dphawkes_ledger.check_release(data_set dphawkes_ledger.data_sets, p_mechanisms jsonb,
                                                        p_unit text, p_max_events integer) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    closed boolean;
    promised boolean;
    view text;
    factor double precision;
    past record;
    alone record;
    total_mu_sq double precision;
    total_rho double precision;
    gaussian_only boolean;
BEGIN
    IF data_set.public_mark IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'DPR01', MESSAGE = 'refused by the database: a formal release on data '
            'marked public (nothing on them is metered, so nothing is formal)';
    END IF;
    closed := EXISTS (SELECT 1 FROM dphawkes_ledger.entries e WHERE e.fingerprint = data_set.fingerprint
                      AND e.formal AND e.unit = 'event' AND e.max_events IS NULL);
    promised := EXISTS (SELECT 1 FROM dphawkes_ledger.promises p WHERE p.fingerprint = data_set.fingerprint)
        OR EXISTS (SELECT 1 FROM dphawkes_ledger.entries e WHERE e.fingerprint = data_set.fingerprint AND e.formal
                   AND e.unit = 'sequence');
    IF promised AND p_unit = 'event' AND p_max_events IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'DPP01', MESSAGE = 'refused by the database: one sequence is one person '
            'on these rows, and an event-level release with no cap on each sequence''s events would leave what it '
            'reveals about one person unbounded';
    END IF;
    FOREACH view IN ARRAY ARRAY['event', 'sequence'] LOOP
        factor := dphawkes_ledger.group_factor(p_unit, p_max_events, view);
        CONTINUE WHEN factor = 'Infinity'::double precision;  -- an uncapped event-level release: the view closes
        IF view = 'sequence' AND closed THEN
            IF p_unit = 'sequence' THEN
                RAISE EXCEPTION USING ERRCODE = 'DPB01', MESSAGE = 'refused by the database: the sequence-level '
                    'budget of this data set is closed (an event-level release with no cap on events per sequence '
                    'was made on it)';
            END IF;
            CONTINUE;
        END IF;
        SELECT * INTO alone FROM dphawkes_ledger.cost(p_mechanisms, factor);
        total_mu_sq := alone.mu_sq;
        total_rho := alone.rho;
        gaussian_only := alone.gaussian_only;
        FOR past IN SELECT c.* FROM dphawkes_ledger.entries e,
                    LATERAL dphawkes_ledger.cost(e.mechanisms, dphawkes_ledger.group_factor(e.unit, e.max_events,
                                                                                            view)) c
                    WHERE e.fingerprint = data_set.fingerprint AND e.formal LOOP
            total_mu_sq := total_mu_sq + past.mu_sq;
            total_rho := total_rho + past.rho;
            gaussian_only := gaussian_only AND past.gaussian_only;
        END LOOP;
        IF (gaussian_only AND total_mu_sq > data_set.budget_mu * data_set.budget_mu)
           OR (NOT gaussian_only AND total_rho > data_set.budget_rho) THEN
            RAISE EXCEPTION USING ERRCODE = 'DPB01', MESSAGE = format('refused by the database: this release would '
                'take the composed privacy loss of this data set%s over its budget ε = %s (δ = %s): %s',
                CASE WHEN view = 'sequence' THEN ' seen per sequence' ELSE '' END,
                data_set.budget_epsilon, data_set.budget_delta,
                CASE WHEN gaussian_only THEN format('μ = %s > %s, the μ of the budget', sqrt(total_mu_sq),
                                                    data_set.budget_mu)
                     ELSE format('ρ = %s > %s, the zCDP ρ of the budget', total_rho, data_set.budget_rho) END);
        END IF;
    END LOOP;
END $$;

-- ANALYST: attach what the draw gave to the charged entry of a request: its result (released) or the failure
-- (failed), by the role that charged it only (another analyst's role cannot write a result into a release it did not
-- make); new mechanisms (the values chosen during the release) must be of the same kinds and cost at least what was
-- charged — a charge is never lowered.
CREATE OR REPLACE FUNCTION dphawkes_ledger.settle(p_fingerprint text, p_request text, p_result text, p_failed boolean,
                                                 p_mechanisms jsonb DEFAULT NULL) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    entry dphawkes_ledger.entries;
    before record;
    after record;
BEGIN
    PERFORM dphawkes_ledger.locked(p_fingerprint);
    SELECT * INTO entry FROM dphawkes_ledger.entries e WHERE e.fingerprint = p_fingerprint AND e.request = p_request;
    IF NOT FOUND OR entry.state <> 'charged' THEN
        RAISE EXCEPTION USING ERRCODE = 'DPR01', MESSAGE = 'refused by the database: the release to settle has '
            || CASE WHEN NOT FOUND THEN 'no entry' ELSE format('an entry in state %s', entry.state) END
            || ', not a charged one';
    END IF;
    IF entry.recorded_by <> session_user THEN
        RAISE EXCEPTION USING ERRCODE = 'DPR01', MESSAGE = format('refused by the database: the release to settle '
            'was charged by the role %s; only that role settles it', entry.recorded_by);
    END IF;
    IF p_mechanisms IS NOT NULL THEN
        PERFORM dphawkes_ledger.checked_mechanisms(p_mechanisms);
        SELECT * INTO before FROM dphawkes_ledger.cost(entry.mechanisms, 1);
        SELECT * INTO after FROM dphawkes_ledger.cost(p_mechanisms, 1);
        IF (SELECT array_agg(m->>'kind' ORDER BY m->>'kind') FROM jsonb_array_elements(p_mechanisms) m)
               IS DISTINCT FROM
           (SELECT array_agg(m->>'kind' ORDER BY m->>'kind') FROM jsonb_array_elements(entry.mechanisms) m)
           OR after.rho < before.rho * (1 - 1e-9) OR after.mu_sq < before.mu_sq * (1 - 1e-9) THEN
            RAISE EXCEPTION USING ERRCODE = 'DPR01', MESSAGE = 'refused by the database: a release would record '
                'less than it was charged';
        END IF;
    END IF;
    UPDATE dphawkes_ledger.entries e
       SET result = coalesce(p_result, '{}'), state = CASE WHEN p_failed THEN 'failed' ELSE 'released' END,
           mechanisms = coalesce(p_mechanisms, e.mechanisms)
     WHERE e.fingerprint = p_fingerprint AND e.request = p_request;
END $$;

-- ANALYST: a non-private look at the rows (the same look from the same tool once).
CREATE OR REPLACE FUNCTION dphawkes_ledger.record_look(p_fingerprint text, p_tool text, p_what text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM dphawkes_ledger.locked(p_fingerprint);
    IF p_tool IS NULL OR p_tool NOT IN ('app', 'cli', 'python', 'sql') OR coalesce(p_what, '') = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'DPR01', MESSAGE = 'refused by the database: a look needs a tool (app, cli, '
            'python or sql) and what was looked at';
    END IF;
    INSERT INTO dphawkes_ledger.looks (fingerprint, created, tool, what)
    VALUES (p_fingerprint, dphawkes_ledger.now_text(), p_tool, p_what) ON CONFLICT DO NOTHING;
END $$;

-- ANALYST: "one sequence is one person" on the rows (an earlier declaration kept as it was); refused once an
-- uncapped event-level release left the per-person view unbounded.
CREATE OR REPLACE FUNCTION dphawkes_ledger.promise_person(p_fingerprint text, p_tool text, p_note text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM dphawkes_ledger.locked(p_fingerprint);
    IF p_tool IS NULL OR p_tool NOT IN ('app', 'cli', 'python', 'sql') THEN
        RAISE EXCEPTION USING ERRCODE = 'DPR01', MESSAGE = 'refused by the database: a declaration needs a tool '
            '(app, cli, python or sql)';
    END IF;
    IF EXISTS (SELECT 1 FROM dphawkes_ledger.promises p WHERE p.fingerprint = p_fingerprint) THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM dphawkes_ledger.entries e WHERE e.fingerprint = p_fingerprint AND e.formal
               AND e.unit = 'event' AND e.max_events IS NULL) THEN
        RAISE EXCEPTION USING ERRCODE = 'DPB01', MESSAGE = 'refused by the database: one sequence cannot be '
            'declared one person here any more (an event-level release with no cap on events per sequence was '
            'made on these rows)';
    END IF;
    INSERT INTO dphawkes_ledger.promises (fingerprint, created, tool, note)
    VALUES (p_fingerprint, dphawkes_ledger.now_text(), p_tool, coalesce(p_note, ''));
END $$;

-- ---------------------------------------------------------------------------------------------------------------
-- One data set's ledger as one JSON document (every data set's, one row each, for NULL), read in one statement: one
-- snapshot of the database.

CREATE OR REPLACE FUNCTION dphawkes_ledger.snapshot(p_fingerprint text) RETURNS SETOF jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
        'fingerprint', d.fingerprint, 'label', d.label,
        'budget', jsonb_build_object('epsilon', d.budget_epsilon, 'delta', d.budget_delta),
        'public_mark', d.public_mark, 'migrated', to_jsonb(d.migrated),
        'person', (SELECT jsonb_build_object('created', p.created, 'tool', p.tool, 'note', p.note)
                   FROM dphawkes_ledger.promises p WHERE p.fingerprint = d.fingerprint),
        'looks', coalesce((SELECT jsonb_agg(jsonb_build_object('created', l.created, 'tool', l.tool, 'what', l.what)
                                            ORDER BY l.seq)
                           FROM dphawkes_ledger.looks l WHERE l.fingerprint = d.fingerprint), '[]'),
        'changes', coalesce((SELECT jsonb_agg(jsonb_build_object('created', c.created, 'tool', c.tool,
                                                                 'role', c.role, 'os_user', c.os_user, 'who', c.who,
                                                                 'what', c.what)
                                              ORDER BY c.created, c.seq)
                             FROM dphawkes_ledger.changes c WHERE c.fingerprint = d.fingerprint), '[]'),
        'entries', coalesce((SELECT jsonb_agg(jsonb_build_object(
                                 'request', e.request, 'label', e.label, 'formal', e.formal, 'reasons', e.reasons,
                                 'mechanisms', e.mechanisms, 'result', e.result, 'created', e.created,
                                 'unit', e.unit, 'max_events', e.max_events, 'state', e.state)
                                 ORDER BY e.created, e.seq)
                             FROM dphawkes_ledger.entries e WHERE e.fingerprint = d.fingerprint), '[]'))
    FROM dphawkes_ledger.data_sets d WHERE p_fingerprint IS NULL OR d.fingerprint = p_fingerprint
$$;

-- The version this script installs (the program reads the largest): version 2 settles a release only by the role that
-- charged it; an older database is brought up to it by running this script again (`dphawkes ledger init`).
INSERT INTO dphawkes_ledger.meta (version) SELECT 2 WHERE NOT EXISTS (SELECT 1 FROM dphawkes_ledger.meta
                                                                       WHERE version >= 2);

-- Only the grants below run the functions: PostgreSQL lets every role execute a new function unless revoked.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA dphawkes_ledger FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA dphawkes_ledger FROM PUBLIC;
REVOKE ALL ON SCHEMA dphawkes_ledger FROM PUBLIC;
