-- The regulator's verdict on each turn (seed 003), beside the routing decision it belongs to:
-- JSON as `ask --json` prints `regulator`. NULL for turns routed before the regulator ran.
ALTER TABLE routing_decisions ADD COLUMN regulator TEXT;
