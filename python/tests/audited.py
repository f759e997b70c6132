"""kseek's Spark data source with the id of the executor that read each row as a column, for
test_spark.py (importable on the executors: the test session puts this folder on their
PYTHONPATH)."""

import pyarrow as pa
import session

import kseek.spark

NAME = "kseek_audited"


class AuditedSource(kseek.spark.KseekDataSource):
    @classmethod
    def name(cls):
        return NAME

    def schema(self):
        return super().schema() + ", executor string"

    def reader(self, schema):
        return AuditedReader(kseek.spark._Options.parse(self.options))


class AuditedReader(kseek.spark.KseekReader):
    def read(self, partition):
        who = session.executor_id()
        for batch in super().read(partition):
            column = pa.array([who] * batch.num_rows, pa.string())
            yield pa.RecordBatch.from_arrays(batch.columns + [column],
                                             names=batch.schema.names + ["executor"])
