"""Answer function: POST /v1/answer (read permissions; pro and enterprise tiers)."""

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging import correlation_paths
from sourcerer.http.api import answers, build_app

logger = Logger()
tracer = Tracer()
metrics = Metrics()
app = build_app(answers)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event, context):
    return app.resolve(event, context)
