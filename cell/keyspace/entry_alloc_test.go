package keyspace
