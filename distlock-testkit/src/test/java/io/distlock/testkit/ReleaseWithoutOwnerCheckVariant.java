package io.distlock.testkit;

/** The contract suite over {@link BrokenVariants.ReleaseWithoutOwnerCheck}; run only by {@link ContractCanFailTest}. */
class ReleaseWithoutOwnerCheckVariant extends BrokenStoreFixture {
    ReleaseWithoutOwnerCheckVariant() {
        super(BrokenVariants.ReleaseWithoutOwnerCheck::new);
    }
}
