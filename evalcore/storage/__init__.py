"""Storage: URIs to filesystems (local or s3://), Parquet tables, run records and resume."""
