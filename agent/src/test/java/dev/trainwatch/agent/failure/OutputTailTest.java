package dev.trainwatch.agent.failure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.RunFailure;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OutputTailTest {

    @TempDir
    Path dir;

    /**
     * An out-of-memory line of an 8-process node (each process's use listed) is long: the allocation comes first,
     * the reserved figures last, and both must survive reading the tail.
     */
    @Test
    void aVeryLongLineKeepsItsBeginningAndItsEnd() throws IOException {
        StringBuilder line = new StringBuilder("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                + "2.00 GiB. GPU 3 has a total capacity of 79.10 GiB of which 1.06 GiB is free.");
        for (int p = 0; p < 80; p++) {
            line.append(" Process ").append(1000 + p).append(" has 9.75 GiB memory in use.");
        }
        line.append(" Of the allocated memory 70.12 GiB is allocated by PyTorch, and 3.50 GiB is reserved by PyTorch "
                + "but unallocated.");
        Path log = dir.resolve("out.log");
        Files.writeString(log, "step 10\n" + line + "\n");
        List<String> tail = OutputTail.read(log, OutputTail.MAX_LINES, OutputTail.MAX_BYTES);
        assertThat(tail.get(1).length()).isLessThan(line.length());
        RunFailure f = FailureClassifier.classify(tail, 1);
        assertThat(f.cause()).isEqualTo("cuda_oom");
        assertThat(f.rank()).isEqualTo(3);
        assertThat(f.detail()).containsEntry("tried_to_allocate_bytes", 2L << 30)
                .containsEntry("allocated_bytes", Math.round(70.12 * (1L << 30)))
                .containsEntry("reserved_unallocated_bytes", Math.round(3.5 * (1L << 30)));
        assertThat(f.lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(500));
    }
}
