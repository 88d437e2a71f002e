-- Records the sink set aside (runlane docs/decisions.md D61): PostgreSQL refused their row for
-- what it holds (sqlstate), or the sink could not read them as events (sqlstate null). Written in
-- the transaction of the batch they came in, with that batch's offsets, so a record is either
-- stored, or here, never neither; the coordinates make a batch read again after a crash write
-- the same rows.
CREATE TABLE sink_rejected (
    consumer_group  text        NOT NULL,
    topic           text        NOT NULL,
    kafka_partition integer     NOT NULL,
    kafka_offset    bigint      NOT NULL,
    -- The ids as far as they could be read, for finding the record: U+0000 shown as U+FFFD and
    -- cut to 256 characters, so that any id fits; the exact bytes are in record_value.
    request_id      text,
    run_id          text,
    -- PostgreSQL's error code (22021, 54000, 22003, ...), or null when no row was tried.
    sqlstate        text,
    reason          text        NOT NULL,
    record_key      bytea,
    record_value    bytea,
    -- The record's headers as {"name": "value"}, values read as UTF-8 (U+0000 shown as U+FFFD).
    record_headers  jsonb,
    -- The record's timestamp: when the ingress received the webhook.
    received_at     timestamptz,
    rejected_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, kafka_partition, kafka_offset)
);

-- Ranges of the topic that retention deleted before the sink stored them, accepted by an
-- operator (`runlane sink accept-gap`): the only way the sink's offsets skip records.
CREATE TABLE sink_gaps (
    consumer_group  text        NOT NULL,
    topic           text        NOT NULL,
    kafka_partition integer     NOT NULL,
    from_offset     bigint      NOT NULL,
    to_offset       bigint      NOT NULL,
    accepted_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, kafka_partition, from_offset)
);
