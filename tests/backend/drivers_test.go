package backend_test

import (
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	_ "github.com/sngen/sn/backend/bolt"
	_ "github.com/sngen/sn/backend/etcd"
	_ "github.com/sngen/sn/backend/redis"
	_ "github.com/sngen/sn/backend/redis/strict"
	_ "github.com/sngen/sn/backend/snowflake"
	_ "github.com/sngen/sn/backend/sql"
	_ "github.com/sngen/sn/backend/sqlite"
)
