package io.distlock.testkit;

/** The contract suite over {@link BrokenVariants.RenewalWithoutOwnerCheck}; run only by {@link ContractCanFailTest}. */
class RenewalWithoutOwnerCheckVariant extends BrokenStoreFixture {
    RenewalWithoutOwnerCheckVariant() {
        super(BrokenVariants.RenewalWithoutOwnerCheck::new);
    }
}
