"""Shipped with --py-files by tests/cluster/it_spark.rs: the PySpark job's workers import it."""
import sys


def words(line):
    return line.split()


def interpreter(_):
    return "%s %d.%d" % (sys.executable, sys.version_info[0], sys.version_info[1])
