package io.distlock.spring.boot;

/** The annotation on PostgreSQL, through the application's DataSource (mode TABLE, tables created). */
class PostgresAnnotationIT extends AnnotationContract {
    @Override
    String[] backendProperties() {
        return new String[] {"distlock.jdbc.table-name=boot_it"};
    }

    @Override
    Class<?>[] backendConfiguration() {
        return new Class<?>[] {Stores.Postgres.class};
    }
}
