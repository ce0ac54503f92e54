package io.distlock.jdbc;

import io.distlock.spi.HeldClaim;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Renewal of read-write lock and semaphore holds: one UPDATE per batch extends every live hold of the batch, and only
 * when fewer rows changed does a SELECT find which holds are gone.
 */
final class ClaimRenewal {
    private static final int RENEW_BATCH = 300;

    private final Db db;
    private final String claims;

    ClaimRenewal(Db db, String claims) {
        this.db = db;
        this.claims = claims;
    }

    Set<HeldClaim> renew(List<HeldClaim> holds, Duration lease) {
        Set<HeldClaim> gone = new HashSet<>();
        long leaseMillis = Db.leaseMillis(lease);
        for (int from = 0; from < holds.size(); from += RENEW_BATCH) {
            gone.addAll(renewBatch(holds.subList(from, Math.min(holds.size(), from + RENEW_BATCH)), leaseMillis));
        }
        return gone;
    }

    private Set<HeldClaim> renewBatch(List<HeldClaim> batch, long leaseMillis) {
        StringBuilder triples = new StringBuilder();
        for (int i = 0; i < batch.size(); i++) {
            triples.append(i == 0 ? "(?, ?, ?)" : ", (?, ?, ?)");
        }
        String where = " WHERE granted = 1 AND expires_at > " + db.now + " AND (name_hash, owner, fencing_token) IN ("
                + triples + ")";
        return db.autocommit("renewal of " + batch.size() + " holds", c -> {
            int updated;
            try (PreparedStatement ps =
                    c.prepareStatement("UPDATE " + claims + " SET expires_at = " + db.now + " + ?" + where)) {
                ps.setLong(1, leaseMillis + 1);
                bindTriples(ps, 2, batch);
                updated = ps.executeUpdate();
            }
            if (updated == batch.size()) {
                return Set.of();
            }
            Map<String, HeldClaim> byKey = new HashMap<>();
            for (HeldClaim h : batch) {
                byKey.put(Names.hash(h.key().name()) + '\n' + h.owner().value() + '\n' + h.fencingToken(), h);
            }
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT name_hash, owner, fencing_token FROM " + claims + where)) {
                bindTriples(ps, 1, batch);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        byKey.remove(rs.getString(1) + '\n' + rs.getString(2) + '\n' + rs.getLong(3));
                    }
                }
            }
            return new HashSet<>(byKey.values());
        });
    }

    private static void bindTriples(PreparedStatement ps, int first, Collection<HeldClaim> batch) throws SQLException {
        int i = first;
        for (HeldClaim h : batch) {
            ps.setString(i++, Names.hash(h.key().name()));
            ps.setString(i++, h.owner().value());
            ps.setLong(i++, h.fencingToken());
        }
    }
}
