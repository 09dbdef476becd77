#!/bin/bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/*, runs as root on every node of the job before it
# starts): start a trainwatch agent for this job, as a transient systemd unit, so the job's GPUs are watched
# under the run id $SLURM_JOB_ID. The agent attributes the job's processes by the SLURM_JOB_ID in their
# environment and follows them until the epilog stops it.
#
# Use this OR the node-wide trainwatch-agent.service, not both: the node-wide agent already watches every GPU
# and names runs by SLURM_JOB_ID by itself. The per-job agent suits clusters that want trainwatch only for
# jobs that ask for it: here, jobs submitted with --comment=trainwatch (SLURM_JOB_COMMENT reaches the Prolog on
# current Slurm releases; check `env` in a test Prolog on yours), or every job with TRAINWATCH_ALL_JOBS=1.
#
# Needs a system user `trainwatch` (useradd --system trainwatch) and /etc/trainwatch/token readable by it
# (root:trainwatch, mode 0640).
#
# A Prolog must be quick and must not fail the job for a monitoring problem: everything below is best effort.
# The launcher installed next to trainwatch-all.jar (docs/DEPLOY.md): the agent's JVM settings, its class-data
# archive (made by the first job's agent on this node, kept in /var/cache/trainwatch-agent for the next ones).
TRAINWATCH_LAUNCHER=${TRAINWATCH_LAUNCHER:-/opt/trainwatch/trainwatch}
TRAINWATCH_COLLECTOR=${TRAINWATCH_COLLECTOR:-http://trainwatch-collector.example.internal:9477}
TRAINWATCH_ALL_JOBS=${TRAINWATCH_ALL_JOBS:-0}

if [ "$TRAINWATCH_ALL_JOBS" != 1 ]; then
  case "${SLURM_JOB_COMMENT:-}" in
    *trainwatch*) ;;
    *) exit 0 ;;
  esac
fi

# Prologs run without a search path: full paths only.
/usr/bin/systemd-run --quiet --unit="trainwatch-job-${SLURM_JOB_ID}" --collect \
  --uid=trainwatch --gid=trainwatch \
  --property=StateDirectory="trainwatch-job-${SLURM_JOB_ID}" \
  --property="AmbientCapabilities=CAP_SYS_PTRACE CAP_DAC_READ_SEARCH" \
  --property=Restart=on-failure \
  --property=CacheDirectory=trainwatch-agent \
  "$TRAINWATCH_LAUNCHER" agent \
    --collector "$TRAINWATCH_COLLECTOR" \
    --run-id "$SLURM_JOB_ID" \
    --token-file /etc/trainwatch/token \
    --spool-dir "/var/lib/trainwatch-job-${SLURM_JOB_ID}" \
  || /usr/bin/logger -t trainwatch "could not start the trainwatch agent for job ${SLURM_JOB_ID}"
exit 0
