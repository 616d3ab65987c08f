"""Ingest function, S3 side: S3 event notifications arrive through SQS; each message is processed on its own
and failures are reported as partial batch failures, so only they are retried (and then go to the DLQ)."""

import json
from functools import lru_cache

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from sourcerer.service.s3ingest import handle_record
from sourcerer.service.wiring import get_service

logger = Logger()
tracer = Tracer()
metrics = Metrics()
processor = BatchProcessor(event_type=EventType.SQS)


@lru_cache(maxsize=1)
def s3_client():
    return boto3.client("s3")


@tracer.capture_method(capture_response=False)
def record_handler(record: SQSRecord) -> None:
    service = get_service()
    notification = json.loads(record.body)
    for s3_record in notification.get("Records", []):  # s3:TestEvent messages carry none
        try:
            outcome = handle_record(s3_record, service=service, s3=s3_client(), request_id=record.message_id)
        except Exception:
            logger.exception("S3 object not ingested", extra={"s3_key": s3_record.get("s3", {}).get("object", {}).get("key")})
            raise
        logger.info("S3 object processed", extra=outcome)
        metrics.add_metric(name=f"S3Object_{outcome['status']}", unit=MetricUnit.Count, value=1)


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event, context):
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
