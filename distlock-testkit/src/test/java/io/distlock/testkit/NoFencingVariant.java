package io.distlock.testkit;

/** The contract suite over {@link BrokenVariants.NoFencing}; run only by {@link ContractCanFailTest}. */
class NoFencingVariant extends BrokenStoreFixture {
    NoFencingVariant() {
        super(BrokenVariants.NoFencing::new);
    }
}
