package dev.trainwatch.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code --attach PID}, with a message for the empty or several PIDs that {@code "$(pgrep -f train.py)"} can give. */
final class PidConverter implements ITypeConverter<Long> {

    @Override
    public Long convert(String value) {
        String v = value.strip();
        if (v.isEmpty()) {
            throw new TypeConversionException("no PID given (a pgrep that matched nothing gives an empty one): start"
                    + " the training first and pass its PID, or leave --attach out to watch every compute process on"
                    + " the GPUs");
        }
        if (v.split("\\s+").length > 1) {
            throw new TypeConversionException("'" + v.replaceAll("\\s+", " ") + "' is several PIDs: pass the one of"
                    + " the launcher (torchrun, accelerate, python), e.g. pgrep -o -f train.py");
        }
        try {
            long pid = Long.parseLong(v);
            if (pid <= 0) {
                throw new TypeConversionException("'" + v + "' is not a process id: pass a positive PID");
            }
            return pid;
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + v + "' is not a process id: pass a number such as the one"
                    + " pgrep -o -f train.py prints");
        }
    }
}
