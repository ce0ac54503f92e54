package io.distlock.testkit;

import io.distlock.LockClient;

/** The async contract over broken implementations; run only by {@link ContractCanFailTest}. */
final class AsyncVariants {
    private AsyncVariants() {}

    /** A cancel (or a timeout) whose waiter keeps its entry in the store's queue: the store drops no abandoned claim. */
    static final class CancelLeavesQueueEntryVariant extends BrokenStoreFixture implements AsyncContract {
        CancelLeavesQueueEntryVariant() {
            super(BrokenVariants.TimeoutLeavesWaiter::new);
        }
    }

    /** A cancel that never reaches the acquire: a grant that comes after it is never released. */
    static final class CancelNotPropagatedVariant extends NaiveAsyncClients.Fixture {
        @Override
        LockClient broken(LockClient real) {
            return NaiveAsyncClients.cancelNotPropagated(real);
        }
    }

    /** A thread parked per waiting future. */
    static final class ThreadPerWaiterVariant extends NaiveAsyncClients.Fixture {
        @Override
        LockClient broken(LockClient real) {
            return NaiveAsyncClients.threadPerWaiter(real);
        }

        @Override
        public int asyncAcquisitions() {
            return 1_000;
        }
    }
}
