package io.distlock.testkit;

/** The contract suite over {@link BrokenVariants.TimeoutLeavesWaiter}; run only by {@link ContractCanFailTest}. */
class TimeoutLeavesWaiterVariant extends BrokenStoreFixture {
    TimeoutLeavesWaiterVariant() {
        super(BrokenVariants.TimeoutLeavesWaiter::new);
    }
}
