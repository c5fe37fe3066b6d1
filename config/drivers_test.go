package config_test

import (
	_ "github.com/sngen/sn/backend/bolt"      // the drivers of module github.com/sngen/sn that
	_ "github.com/sngen/sn/backend/snowflake" // the tests and examples name; those of the
	_ "github.com/sngen/sn/backend/sql"       // modules of heavy clients are tested in module tests
)
