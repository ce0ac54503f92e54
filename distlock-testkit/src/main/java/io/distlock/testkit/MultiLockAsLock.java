package io.distlock.testkit;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.MultiLock;
import io.distlock.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The whole lock contract run against {@link MultiLock}: the clients this fixture makes answer {@code lock(name)} with
 * a multi-lock over one lock of each member client, named {@link #memberName(String, int)}. The member clients may be
 * of one store or of several. A test class implements {@link #createMemberClients}, and {@link #expireHold} and
 * {@link #residue} over every member (see {@link #memberName}).
 */
public interface MultiLockAsLock extends AllLockContracts {

    /** New clients, one per member, each with {@code watchdogLease}; the first one's admin serves the fixture's. */
    List<LockClient> createMemberClients(Duration watchdogLease);

    /**
     * The name of member {@code member} of the multi-lock the fixture serves for {@code name}: the name itself for the
     * first member (so bad names are refused by it, naming their own length), the name with {@code #member} for the
     * others, or where that would pass the name limit, the name's head with {@code #member-<hash>}, distinct for
     * distinct names.
     */
    static String memberName(String name, int member) {
        if (member == 0) {
            return name;
        }
        String suffix = "#" + member;
        if (name.length() + suffix.length() <= Checks.MAX_NAME_LENGTH) {
            return name + suffix;
        }
        String tag = suffix + "-" + Integer.toHexString(name.hashCode());
        return name.substring(0, Math.max(0, Checks.MAX_NAME_LENGTH - tag.length())) + tag;
    }

    @Override
    default LockClient createClient(Duration watchdogLease) {
        return new Client(createMemberClients(watchdogLease));
    }

    /** A client whose locks are multi-locks over its member clients; closing it closes them all. */
    final class Client extends ForwardingLockClient {
        private final List<LockClient> members;

        public Client(List<LockClient> members) {
            super(members.get(0));
            this.members = List.copyOf(members);
        }

        @Override
        public DistributedLock lock(String name) {
            return multi(name, c -> c::lock);
        }

        @Override
        public DistributedLock fairLock(String name) {
            return multi(name, c -> c::fairLock);
        }

        private DistributedLock multi(String name, Function<LockClient, Function<String, DistributedLock>> kind) {
            List<DistributedLock> locks = new ArrayList<>();
            for (int i = 0; i < members.size(); i++) {
                locks.add(kind.apply(members.get(i)).apply(memberName(name, i)));
            }
            return MultiLock.of(locks);
        }

        @Override
        public void close() {
            RuntimeException failure = null;
            for (LockClient c : members) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    failure = e;
                }
            }
            if (failure != null) {
                throw failure;
            }
        }
    }
}
