#!/bin/sh
# One-shot (the temporal-schema service, image temporalio/admin-tools): the
# steps of Temporal's own PostgreSQL compose sample. Creates Temporal's two
# databases and brings their schemas to the version this admin-tools image
# ships, which is the version of the server image with the same tag.
set -eu
: "${POSTGRES_SEEDS:?POSTGRES_SEEDS (the PostgreSQL host) is required}"
: "${POSTGRES_USER:?POSTGRES_USER is required}"
: "${SQL_PASSWORD:?SQL_PASSWORD (read by temporal-sql-tool) is required}"
port=${DB_PORT:-5432}
schemas=/etc/temporal/schema/postgresql/v12

nc -z -w 10 "$POSTGRES_SEEDS" "$port"
setup() {
  tool="temporal-sql-tool --plugin postgres12 --ep $POSTGRES_SEEDS -p $port -u $POSTGRES_USER --db $1"
  # A second run finds the database there already; the schema steps then apply only what is missing.
  $tool create || echo "database $1 not created (it exists already?)"
  $tool setup-schema -v 0.0
  $tool update-schema -d "$2"
}
setup temporal "$schemas/temporal/versioned"
setup temporal_visibility "$schemas/visibility/versioned"
echo "Temporal schemas are set up"
