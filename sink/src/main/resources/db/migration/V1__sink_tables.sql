-- The sink's tables (runlane docs/decisions.md D53-D55).
-- Request ids compare as PostgreSQL's "C" collation does: by their UTF-8 bytes, that is by code
-- point, whatever the database's default collation; the runs guard orders by them.

-- Every applied event, once: the primary key absorbs every copy (Sume retries that reached Kafka
-- twice, a replay's re-emission, a batch written again after a crash).
CREATE TABLE processed_events (
    request_id       text COLLATE "C" PRIMARY KEY,
    run_id           text        NOT NULL,
    type             text,
    created_at       timestamptz NOT NULL,
    -- created_at's nanoseconds within its second: a timestamptz keeps microseconds only.
    created_at_nanos integer     NOT NULL,
    data             jsonb,
    -- The record's timestamp: when the ingress received the webhook.
    received_at      timestamptz NOT NULL,
    topic            text        NOT NULL,
    kafka_partition  integer     NOT NULL,
    kafka_offset     bigint      NOT NULL,
    -- The replay (runlane.replay header) when the first copy stored was a re-emission.
    replay           text,
    recorded_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX processed_events_run_id ON processed_events (run_id);

-- The state of each run after its newest event in (created_at, request_id): the same fields as
-- GET /runs/{run_id}. An older event never overwrites it.
CREATE TABLE runs (
    run_id                text PRIMARY KEY,
    last_request_id       text COLLATE "C" NOT NULL,
    last_created_at       timestamptz NOT NULL,
    last_created_at_nanos integer     NOT NULL,
    last_type             text,
    applied_count         bigint      NOT NULL,
    updated_at            timestamptz NOT NULL,
    data                  jsonb
);

-- Where each partition's next batch starts, written in the batch's own transaction: the sink
-- seeks here on every assignment and never reads offsets committed to Kafka.
CREATE TABLE sink_offsets (
    consumer_group  text        NOT NULL,
    topic           text        NOT NULL,
    kafka_partition integer     NOT NULL,
    next_offset     bigint      NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, kafka_partition)
);
