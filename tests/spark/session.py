"""A Spark session with real executor processes, for kseek's Spark tests.

Use the Python of tests/python/env (it has pyspark 4.2.0, pandas, pyarrow, pytest):

    import sys; sys.path.insert(0, "tests/spark")
    from session import spark_session, wait_for_executors, executor_id, stop_session

    spark = spark_session("my-test")          # 2 executors, registered, Kafka jars on
    try:
        ...
    finally:
        stop_session(spark)                   # also runs at interpreter exit

Cluster
-------
The master is ``local-cluster[N,1,1024]``: Spark's own test cluster, started inside the
driver JVM (a standalone Master and N Workers), whose Workers launch N separate executor
JVMs (``CoarseGrainedExecutorBackend``), 1 core and a 1024 MB worker each (executor heap
``spark.executor.memory=768m``). Every executor runs its own Python workers (forked from one
``pyspark.daemon`` per executor), so partitions of one job really run in different
processes. It works with pip's pyspark (no separate Spark install, no SPARK_HOME needed),
needing only Java 17 as ``java`` (or ``JAVA_HOME``): executors use the same JVM as the
driver.

Each Python process gets a private directory (``work_dir``, by default a fresh
``$TMPDIR/kseek-spark-*``) that serves as its SPARK_HOME: symlinks to pyspark's ``bin``,
``jars``, ``python``, ... plus ``work/`` (the Workers' work directories: executor stdout and
stderr in ``work/<app-id>/<executor-id>/``) and ``local/`` (``SPARK_LOCAL_DIRS``: block
manager and shuffle files). Without it the Workers would write into the venv's
``site-packages/pyspark/work``. Concurrent processes (pytest-xdist) do not share anything:
own directory, random ports. The driver JVM outlives ``spark.stop()`` and serves the next session of the same process
with the environment it started with, so all sessions of a process share this directory
(and the JVM options and driver memory of the first). ``stop_session`` removes the
session's ``work/<app-id>``, and the directory goes at interpreter exit, unless
``keep_work_dir`` (or ``KSEEK_SPARK_KEEP=1``): then it stays and its path is printed at
exit. Look in ``work/*/*/stderr`` when an executor fails.

``spark_session`` waits (``wait_for_executors``, polled, with a deadline) until all N
executors have registered, so a job's tasks spread over all of them: with 1 core per
executor the scheduler offers one task to each executor's free slot, so a job with at
least N tasks runs tasks on every executor (which executor gets which task is not fixed).

Python on executors
-------------------
Python workers run ``sys.executable`` (``PYSPARK_PYTHON`` is set to it before the JVM
starts; pyspark 4.2 reads only the ``PYSPARK_PYTHON`` environment variable for this, the
``spark.pyspark.python`` setting is ignored by an already-running Python driver and is set
only for completeness). Without it the workers would run ``python3`` from PATH, outside the
venv. So any package pip-installed into the venv (the kseek package) is importable inside
``DataSourceReader.read()`` on executors. Extra directories (``python_path`` argument or
``KSEEK_SPARK_PYTHONPATH``, ``os.pathsep``-separated) are added to the workers' PYTHONPATH
(``spark.executorEnv.PYTHONPATH``), and so is this directory (tests/spark), so that
functions of this module (``executor_id``) can be used by reference in code shipped to
executors.

Which executor runs the code
----------------------------
PySpark 4.2's ``TaskContext`` (``pyspark.TaskContext.get()``, which is set inside
``DataSourceReader.read()``) has ``stageId()``, ``partitionId()``, ``attemptNumber()``,
``taskAttemptId()``, ``cpus()``, ``resources()`` and ``getLocalProperty()``, but no executor
id. ``executor_id()`` finds it instead from the process tree: a Python worker is a child of
the executor's ``pyspark.daemon``, itself a child of the executor JVM, whose command line
holds ``org.apache.spark.executor.CoarseGrainedExecutorBackend ... --executor-id <id>``
(read from ``/proc/<pid>/cmdline``, Linux). The id is Spark's own executor id ("0", "1",
...; the same ids as in the driver's logs and in ``work/<app-id>/<id>/``), stable for the
life of the executor. As a second source, the standalone Worker sets
``SPARK_LOG_URL_STDERR=http://...&executorId=<id>&logType=stderr`` in the environment of
each executor, which the Python workers inherit; ``SPARK_EXECUTOR_DIRS`` (a per-executor
directory) is inherited too. ``executor_pid()`` returns the executor JVM's pid. Both return
"driver" / None when called outside an executor (e.g. in ``partitions()`` or
``pushFilters()``, which run in a Python worker of the driver JVM).

Python Data Source facts (pyspark 4.2.0; checked by verify_cluster.py)
-------------------------------------------------------------------------
* ``DataSource.__init__`` gets ``self.options`` as a ``pyspark.sql.datasource.CaseInsensitiveDict``:
  keys are stored lower-cased (``Kafka.SASL.Jaas.Config`` -> ``kafka.sasl.jaas.config``),
  dots are kept, values are strings, ``get``/``[]``/``in`` ignore case.
* ``DataSource.schema()`` is called (on the driver) only when the user gives no
  ``.schema(...)``; it may return a DDL string or a StructType.
* ``read()`` may yield ``pyarrow.RecordBatch``es (or tuples/Rows, not mixed). Only the first
  batch is checked, and it must equal the declared schema's Arrow schema exactly (same
  names in the same order, same nullability, types as Spark maps them: int -> int32,
  bigint -> int64, string -> string (not large_string), binary -> binary (not
  large_binary), timestamp -> ``timestamp[us, tz=UTC]`` (a naive ``timestamp[us]`` is
  rejected)), else the task fails with ``DATA_SOURCE_RETURN_SCHEMA_MISMATCH``.
* ``DataSourceReader.pushFilters(self, filters)`` (since 4.1) is called once during
  planning, in a Python worker of the driver, and only when
  ``spark.sql.python.filterPushdown.enabled=true`` (default false). With it false, a reader
  that overrides pushFilters makes the query FAIL (``DATA_SOURCE_PUSHDOWN_DISABLED``).
  ``filters`` is a list (AND-ed) of ``pyspark.sql.datasource`` filters: EqualTo,
  EqualNullSafe, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual, In, IsNull,
  IsNotNull, Not, StringStartsWith, StringEndsWith, StringContains, with ``attribute`` a
  tuple of names (``("seq",)``) and ``value`` a Python value. It returns (or yields) the
  filters it does NOT handle, each the very object it was given (identity is compared;
  a new equal object raises ``DATA_SOURCE_EXTRANEOUS_FILTERS``); Spark evaluates those
  after the scan and trusts the others completely (it does not re-check them). Changes
  to ``self`` in pushFilters are seen by ``partitions()`` and ``read()``. OR-ed
  conditions are not passed at all; ``a <> 3`` arrives as ``Not(EqualTo(("a",), 3))``;
  Spark adds ``IsNotNull`` for compared columns.
* Literal types: an int/bigint column gets ``int``; a timestamp column gets an aware
  ``datetime.datetime`` in UTC (``tzinfo=zoneinfo.ZoneInfo("UTC")``, microseconds), for
  ``TIMESTAMP'...'`` literals, string literals compared with a timestamp column, and
  ``F.lit(aware datetime)`` alike (session time zone UTC); ``In`` gets a list; string
  patterns a ``str``.
* Option values do not appear in plan strings: ``queryExecution().toString()`` and
  ``explain("formatted")`` show ``RelationV2[...] <name>`` / ``BatchScan <name>`` and
  ``PushedFilters: [LessThan(seq,5)]`` (filter values do), never options (a
  ``kafka.sasl.jaas.config`` password is not shown). Spark's own Kafka source neither:
  ``KafkaRelation(strategy=Subscribe[t1], start=..., end=...)``.

Settings
--------
``spark.sql.python.filterPushdown.enabled=true`` (``DataSourceReader.pushFilters`` is called
only then), ``spark.sql.session.timeZone=UTC``, ``spark.sql.shuffle.partitions=4``, UI off,
driver 1g, everything bound to 127.0.0.1 (``SPARK_LOCAL_IP``, ``spark.driver.host``: this
machine's hostname resolves to a loopback address, and Spark then picks the eth0 address),
``spark.jars`` from ``tests/spark/jars`` when ``kafka_jars`` (Spark's own Kafka source, for
``spark.read.format("kafka")``), ``spark.task.maxFailures=1`` (a failing task fails the
job at once, no retries hiding it). JVMs run C1 only (``-XX:TieredStopAtLevel=1``) with the serial
GC. ``conf`` overrides any of these. Start-up (three JVMs, until both executors have
registered) took 12-17 s on the 2-core machine under a load average of 9 (27 s without
the C1-only flag); the first job that starts Python workers on the executors costs
another 10-25 s under that load, later jobs a few seconds.

Only one SparkContext can exist per Python process: ``spark_session`` refuses to start a
second one while one is active (stop it first).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Mapping, Optional, Sequence

HERE = Path(__file__).resolve().parent

_EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
_JVM_OPTS = "-Duser.timezone=UTC -XX:+UseSerialGC -XX:TieredStopAtLevel=1"

# The private SPARK_HOME of this process. The driver JVM (py4j gateway) outlives
# spark.stop() and is reused by the next session of the process, with the environment it
# was started with (SPARK_HOME, where its local-cluster Workers find jars and write), so
# every session of a process shares one directory: created by the first, removed at exit.
_home: Optional[Path] = None
_home_is_temp = False
_keep_home = False
# The sessions started here, for stop_session and atexit.
_sessions: dict = {}


def _pyspark_home() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pyspark is not installed in this Python (%s)" % sys.executable)
    return Path(spec.submodule_search_locations[0])


def kafka_jar_list() -> str:
    """The comma-separated jar list of tests/spark/jars (Spark's Kafka source)."""
    out = subprocess.run(
        [str(HERE / "jars")], check=True, stdout=subprocess.PIPE, text=True
    ).stdout.strip()
    if not out:
        raise RuntimeError("tests/spark/jars printed nothing")
    return out


def _make_spark_home(work_dir: Optional[str]) -> Path:
    """A private SPARK_HOME: symlinks to pip pyspark's folders, plus work/ and local/."""
    global _home, _home_is_temp
    if _home is not None:
        if work_dir is not None and Path(work_dir).resolve() != _home:
            raise RuntimeError(
                "this process's Spark driver JVM already uses work_dir %s; a process has one" % _home
            )
        return _home
    if work_dir is None:
        home = Path(tempfile.mkdtemp(prefix="kseek-spark-"))
    else:
        home = Path(work_dir).resolve()
        home.mkdir(parents=True, exist_ok=True)
    _home, _home_is_temp = home, work_dir is None
    real = _pyspark_home()
    for name in ("bin", "jars", "python", "sbin", "conf", "data", "licenses"):
        src, dst = real / name, home / name
        if src.exists() and not dst.exists():
            dst.symlink_to(src, target_is_directory=True)
    for name in ("work", "local"):
        (home / name).mkdir(exist_ok=True)
    return home


def spark_session(
    app_name: str,
    *,
    executors: int = 2,
    kafka_jars: bool = True,
    conf: Optional[Mapping[str, str]] = None,
    python_path: Optional[Sequence[str]] = None,
    worker_memory_mb: int = 1024,
    work_dir: Optional[str] = None,
    wait: bool = True,
    timeout: float = 180.0,
):
    """Starts a SparkSession on ``local-cluster[executors,1,worker_memory_mb]``.

    Returns once all ``executors`` executors have registered (unless ``wait`` is false).
    ``python_path``: extra directories importable in the executors' Python workers (added
    to ``KSEEK_SPARK_PYTHONPATH``'s). ``conf``: extra or overriding Spark settings.
    ``work_dir``: the session's private directory (see the module doc); a fresh temporary
    one by default.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is not None:
        raise RuntimeError("a SparkContext is already running in this process; stop it first")

    home = _make_spark_home(work_dir)

    # Read by pyspark (driver side: sc.pythonExec) and by the JVM-side launcher; set before
    # the JVM starts so that executors inherit them too.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_HOME"] = str(home)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    # The driver's and the Workers' (so the executors') local dirs; as a variable rather
    # than spark.local.dir, which makes Spark warn that the cluster manager overrides it.
    os.environ["SPARK_LOCAL_DIRS"] = str(home / "local")

    paths = [str(HERE)]
    paths += [p for p in os.environ.get("KSEEK_SPARK_PYTHONPATH", "").split(os.pathsep) if p]
    paths += [str(Path(p).resolve()) for p in (python_path or [])]

    # Executor heap: what fits the Worker's memory (the Worker refuses larger executors).
    executor_mb = min(768, worker_memory_mb)
    settings = {
        "spark.master": "local-cluster[%d,1,%d]" % (executors, worker_memory_mb),
        "spark.app.name": app_name,
        "spark.driver.memory": "1g",
        "spark.executor.memory": "%dm" % executor_mb,
        "spark.executor.cores": "1",
        "spark.cores.max": str(executors),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
        "spark.executorEnv.PYTHONPATH": os.pathsep.join(paths),
        "spark.sql.python.filterPushdown.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": str(2 * executors),
        "spark.sql.adaptive.enabled": "false",
        # Fewer, smaller threads and buffers: three JVMs share two cores.
        "spark.rpc.netty.dispatcher.numThreads": "2",
        "spark.shuffle.io.serverThreads": "2",
        "spark.shuffle.io.clientThreads": "2",
        # Executors register within the deadline even on a loaded machine.
        "spark.network.timeout": "300s",
        # A task's failure is the test's failure: no retries that hide it.
        "spark.task.maxFailures": "1",
        # C1 only (no C2 JIT) and the serial GC: test jobs are small and short, and three
        # JVMs on two cores spend most of their start-up compiling; this halves the session
        # start (27 s -> 13 s on the loaded 2-core CI machine) and first jobs.
        "spark.driver.extraJavaOptions": _JVM_OPTS,
        "spark.executor.extraJavaOptions": _JVM_OPTS,
    }
    if kafka_jars:
        settings["spark.jars"] = kafka_jar_list()
    settings.update(conf or {})

    builder = SparkSession.builder
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    _sessions[id(spark)] = spark
    if wait:
        try:
            wait_for_executors(spark, executors, timeout=timeout)
        except BaseException:
            stop_session(spark, keep_work_dir=True)
            raise
    return spark


def registered_executors(spark) -> int:
    """The number of executors registered with the driver (the driver itself excluded)."""
    # getExecutorMemoryStatus has one entry per block manager, the driver's included.
    return spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1


def wait_for_executors(spark, n: int, *, timeout: float = 180.0) -> None:
    """Polls until ``n`` executors have registered; raises TimeoutError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        have = registered_executors(spark)
        if have >= n:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                "only %d of %d Spark executors registered within %.0f s (executor logs: %s)"
                % (have, n, timeout, _log_hint(spark))
            )
        time.sleep(0.1)


def _log_hint(spark) -> str:
    return str(_home / "work") if _home else "<SPARK_HOME>/work"


def stop_session(spark, *, keep_work_dir: Optional[bool] = None) -> None:
    """Stops the session and removes its executors' logs (``work/<app-id>``) unless kept.

    Kept (``keep_work_dir=True`` or ``KSEEK_SPARK_KEEP=1``), the process's whole work
    directory stays after exit too, and its path is printed on stderr at exit.
    """
    global _keep_home
    _sessions.pop(id(spark), None)
    app_id = None
    try:
        app_id = spark.sparkContext.applicationId
    except Exception:
        pass
    try:
        spark.stop()
    finally:
        if keep_work_dir is None:
            keep_work_dir = os.environ.get("KSEEK_SPARK_KEEP", "") not in ("", "0")
        if keep_work_dir:
            _keep_home = True
        elif _home is not None and app_id:
            shutil.rmtree(_home / "work" / app_id, ignore_errors=True)


@atexit.register
def _stop_all() -> None:
    for spark in list(_sessions.values()):
        try:
            stop_session(spark)
        except Exception:
            pass
    if _home is not None and _home_is_temp:
        if _keep_home:
            print("kseek spark: kept the Spark work directory %s" % _home, file=sys.stderr)
        else:
            shutil.rmtree(_home, ignore_errors=True)


# --- Inside executors -------------------------------------------------------------------


def _parent(pid: int) -> Optional[int]:
    try:
        with open("/proc/%d/stat" % pid) as f:
            # pid (comm) state ppid ...; comm may hold spaces and parentheses.
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _cmdline(pid: int) -> list:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return []


@functools.lru_cache(maxsize=1)
def _executor_process() -> tuple:
    """(executor id, executor JVM pid) of this process's executor, or ("driver", None)."""
    pid: Optional[int] = os.getpid()
    for _ in range(8):
        pid = _parent(pid) if pid is not None else None
        if not pid or pid <= 1:
            break
        args = _cmdline(pid)
        if _EXECUTOR_CLASS in args:
            try:
                return args[args.index("--executor-id") + 1], pid
            except (ValueError, IndexError):
                return "pid-%d" % pid, pid
    # Not below an executor JVM (or no /proc): the standalone Worker's environment.
    url = os.environ.get("SPARK_LOG_URL_STDERR", "")
    for part in url.replace("?", "&").split("&"):
        if part.startswith("executorId="):
            return part[len("executorId=") :], None
    return "driver", None


def executor_id() -> str:
    """Spark's id ("0", "1", ...) of the executor whose Python worker runs this code.

    Usable inside ``DataSourceReader.read()`` (and any task code); "driver" outside
    executors. Stable for the executor's life; cached per Python worker process.
    """
    return _executor_process()[0]


def executor_pid() -> Optional[int]:
    """The pid of the executor JVM whose Python worker runs this code (None outside)."""
    return _executor_process()[1]
