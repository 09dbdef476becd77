#!/usr/bin/env bash
# Type-checks the dashboards against Grafana's own TypeScript schema (npm @grafana/schema) with tsc, without a
# Grafana server. Not part of `./mvnw verify` (it needs the npm registry); run it after editing a dashboard:
#   dashboards/check-schema.sh
# Two kinds of report are ignored because they are artefacts of checking JSON against TypeScript, not errors:
# string enums (ThresholdsMode, MappingType, ...) do not accept their own string values from a literal, and
# query variables' "definition" (written by Grafana's own export) is not in the schema type.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent @grafana/schema@13.2.3 typescript@5 >/dev/null
for file in "$here"/*.json; do
  name="$(basename "$file" .json)"
  node -e '
    const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    for (const v of d.templating.list) delete v.definition;
    console.log("import { Dashboard } from \"@grafana/schema\";\nexport const d: Dashboard = " + JSON.stringify(d, null, 1) + ";");
  ' "$file" > "check-$name.ts"
done
set +e
npx tsc --noEmit --strict --moduleResolution node --skipLibCheck check-*.ts > tsc.out 2>&1
set -e
if grep -v "is not assignable to type '\(ThresholdsMode\|MappingType\|FieldColorModeId\|SortOrder\)'" tsc.out | grep "error TS"; then
  echo "dashboards do not match Grafana's schema (above)" >&2
  exit 1
fi
echo "dashboards match @grafana/schema 13.2.3"
