#!/bin/bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/*, runs as root on every node of the job after it
# ends): stop the job's trainwatch agent started by prolog.sh. Stopping sends SIGTERM, so the agent flushes
# its last batch; systemd then forgets the transient unit. Batches it could not deliver stay in
# /var/lib/trainwatch-job-<id>; remove old ones with a systemd-tmpfiles rule.
# Best effort: an Epilog that fails drains the node, which a monitoring problem must never do.
/usr/bin/systemctl stop "trainwatch-job-${SLURM_JOB_ID}.service" 2>/dev/null || true
exit 0
