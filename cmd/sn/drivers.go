package main

// The sn command links every backend, and the database/sql drivers of
// the SQL ledgers: a config it reads may name any of them.
import (
	_ "github.com/go-sql-driver/mysql" // mysql:// ledgers
	_ "github.com/jackc/pgx/v5/stdlib" // postgres:// ledgers

	_ "github.com/sngen/sn/backend/bolt"
	_ "github.com/sngen/sn/backend/etcd"
	_ "github.com/sngen/sn/backend/redis"
	_ "github.com/sngen/sn/backend/redis/strict"
	_ "github.com/sngen/sn/backend/snowflake"
	_ "github.com/sngen/sn/backend/sql"
	_ "github.com/sngen/sn/backend/sqlite"
)
