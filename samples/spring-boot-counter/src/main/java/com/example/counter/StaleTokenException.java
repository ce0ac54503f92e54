package com.example.counter;

import java.time.LocalDate;

/** A write refused by the table: the writer's hold ran out and a later holder has written the row since. */
public class StaleTokenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StaleTokenException(LocalDate day, long token) {
        super("the write of " + day + " with fencing token " + token
                + " was refused: a holder with a greater token has written the row since");
    }
}
