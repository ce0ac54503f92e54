package io.distlock.cli;

import org.jspecify.annotations.Nullable;

/** The backend could not be reached or set up; the command exits with {@link ExitCodes#UNREACHABLE}. */
final class BackendUnreachableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BackendUnreachableException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
