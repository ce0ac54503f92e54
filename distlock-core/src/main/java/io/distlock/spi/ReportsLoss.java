package io.distlock.spi;

/**
 * A {@link ClaimStore} that can tell the client at once that its holds may be gone (a session suspended or expired, a
 * connection lost), instead of at the next watchdog tick.
 */
public interface ReportsLoss {

    /**
     * Called once by the engine when it starts. The store may call {@code checkNow} from any thread, as often as it
     * likes; the engine then runs {@link ClaimStore#renew} for every renewed hold at once and marks the gone ones lost.
     */
    void onPossibleLoss(Runnable checkNow);
}
