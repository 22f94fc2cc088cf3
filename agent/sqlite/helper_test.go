package sqlite_test

import "database/sql"

func sqlOpen(path string) (*sql.DB, error) { return sql.Open("sqlite", path) }
