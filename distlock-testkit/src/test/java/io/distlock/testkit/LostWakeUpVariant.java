package io.distlock.testkit;

/** The contract suite over {@link BrokenVariants.LostWakeUp}; run only by {@link ContractCanFailTest}. */
class LostWakeUpVariant extends BrokenStoreFixture {
    LostWakeUpVariant() {
        super(BrokenVariants.LostWakeUp::new);
    }
}
