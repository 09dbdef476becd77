package dev.trainwatch.protocol;

import java.util.List;
import java.util.Map;

/**
 * Why a run's processes exited with an error, read from the tail of their output (and the exit status when the
 * watcher started the process). Sent by {@code trainwatch run} and by agents as the {@code failure} of an
 * {@link AgentEvent} of kind {@code run_failed}. Immutable.
 *
 * @param cause    {@code cuda_oom}, {@code nccl_timeout}, {@code xid}, {@code gpu_lost}, {@code signal},
 *                 {@code host_oom}, {@code exception} or {@code unknown}
 * @param summary  one line saying what happened, in the output's own terms
 * @param exitCode the process's exit code when known (128 + N for a signal, as a shell reports it)
 * @param signal   the signal that ended it, when known (9 for SIGKILL)
 * @param rank     the rank the decisive line names, when it names one
 * @param detail   figures read from the decisive lines: for {@code cuda_oom} {@code tried_to_allocate_bytes},
 *                 {@code gpu_index}, {@code total_capacity_bytes}, {@code reserved_bytes}, {@code allocated_bytes},
 *                 {@code free_bytes}, {@code process_in_use_bytes} (this process, as PyTorch 2.x prints it), and
 *                 for other processes holding memory on the GPU {@code other_processes} (how many),
 *                 {@code other_process_pids} ("1108671, 1114104") and {@code other_processes_bytes};
 *                 for {@code nccl_timeout} {@code op}, {@code seq}, {@code timeout_ms}, {@code ran_ms}; for
 *                 {@code exception} {@code type}, {@code message}, and {@code nan_loss} (true) when the trainer
 *                 said its loss became NaN; for {@code host_oom} {@code worker_pid}, or {@code killed_pid} and
 *                 {@code killed_command} from the kernel's own OOM-kill record;
 *                 for {@code xid} {@code xid}; for {@code signal} {@code signal_name}
 * @param lines    the lines that show the cause (at most 12, each at most 500 characters)
 */
public record RunFailure(String cause, String summary, Integer exitCode, Integer signal, Integer rank,
                         Map<String, Object> detail, List<String> lines) {
}
