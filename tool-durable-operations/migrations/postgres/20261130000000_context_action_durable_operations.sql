CREATE TABLE IF NOT EXISTS "context_action_durable_operations" (
  operation_key text COLLATE "C" PRIMARY KEY,
  fingerprint text NOT NULL,
  owner_id text NOT NULL,
  incarnation text NOT NULL,
  revision integer NOT NULL,
  state text NOT NULL CHECK (state IN ('pending','completed','failed','unknown')),
  result jsonb,
  result_present boolean NOT NULL DEFAULT false,
  reason text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  lease_expires_at bigint,
  reconciled_by text,
  reconciled_at bigint
);
CREATE INDEX IF NOT EXISTS "context_action_durable_operations_updated_at_idx" ON "context_action_durable_operations" (updated_at);
