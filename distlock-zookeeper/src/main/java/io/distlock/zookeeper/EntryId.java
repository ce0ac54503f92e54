package io.distlock.zookeeper;

/** Names an owner's queue entry under one lock name: the key of this client's table of its own entries. */
record EntryId(String name, String owner) {
    // equals and hashCode written out: looked up on every acquire and release, and the record methods generated
    // through invokedynamic cost more on JDK 17

    @Override
    public boolean equals(Object o) {
        return this == o || (o instanceof EntryId other && name.equals(other.name) && owner.equals(other.owner));
    }

    @Override
    public int hashCode() {
        return 31 * name.hashCode() + owner.hashCode();
    }
}
