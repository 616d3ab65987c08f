"""Embed function: computes the vectors of chunks ingested without them (deferred embedding).

Ingest (the API function and the S3 function) writes chunks keyword-searchable at once and sends their unit
ids to the embed queue, a batch per message; each message here is embedded with Bedrock and written back to
OpenSearch. Failures are reported per message (partial batch response), so only they are retried, then go to
the dead-letter queue. A redelivered message finds its chunks already embedded and does nothing.
"""

import json
from functools import lru_cache

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from sourcerer.errors import ConfigurationError
from sourcerer.store import open_index
from sourcerer.store.base import QueuedEmbedding

logger = Logger()
tracer = Tracer()
metrics = Metrics()
processor = BatchProcessor(event_type=EventType.SQS)


@lru_cache(maxsize=1)
def index() -> QueuedEmbedding:
    opened = open_index()
    if not isinstance(opened, QueuedEmbedding):
        raise ConfigurationError("the embed function needs an index whose vectors a queue fills (SOURCERER_INDEX: OpenSearch)")
    return opened


@tracer.capture_method(capture_response=False)
def record_handler(record: SQSRecord) -> None:
    message = json.loads(record.body)
    embedded = index().embed_units(message["tenant"], list(message["unit_ids"]))
    logger.info("chunks embedded", extra={"tenant": message["tenant"], "asked": len(message["unit_ids"]), "embedded": embedded})
    metrics.add_metric(name="ChunksEmbedded", unit=MetricUnit.Count, value=embedded)


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event, context):
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
