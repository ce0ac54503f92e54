package io.distlock.testkit;

/**
 * Every contract of an exclusive lock that a backend must pass in one JVM. A backend whose store can be shared by
 * several processes also implements {@link MultiProcessContract}.
 */
public interface AllLockContracts
        extends MutualExclusionContract,
                ReentrancyContract,
                OwnerCheckContract,
                LeaseContract,
                LostHoldContract,
                FencingContract,
                WaitingContract,
                TimeoutContract,
                FairnessContract,
                BadInputContract {}
