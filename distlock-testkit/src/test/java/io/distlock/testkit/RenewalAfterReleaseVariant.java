package io.distlock.testkit;

/** The contract suite over {@link BrokenVariants.RenewalAfterRelease}; run only by {@link ContractCanFailTest}. */
class RenewalAfterReleaseVariant extends BrokenStoreFixture {
    RenewalAfterReleaseVariant() {
        super(BrokenVariants.RenewalAfterRelease::new);
    }
}
