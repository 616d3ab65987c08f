"""Amazon Bedrock through botocore's Stubber: Converse for chat, InvokeModel for Titan embeddings."""

import io
import json

import boto3
import numpy as np
import pytest
from botocore.stub import Stubber
from sourcerer import ask
from sourcerer.retrieval.embedders import BedrockTitanEmbedder
from sourcerer.synthesis.providers import BedrockChat

QUESTION = "How long does standard shipping take?"


@pytest.fixture
def runtime():
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _converse(text):
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 200, "outputTokens": 20, "totalTokens": 220},
        "metrics": {"latencyMs": 100},
    }


def test_converse_answer_is_cited_and_reports_its_provider(runtime, seed_passages):
    client, stubber = runtime
    content = json.dumps({"answer": "Standard shipping takes 3 to 5 business days [1].", "citations": [1], "refused": False})
    stubber.add_response("converse", _converse(content))

    answer = ask(QUESTION, passages=seed_passages, chat=BedrockChat(model="anthropic.claude-test", client=client))

    assert answer.provider == "bedrock:anthropic.claude-test"
    assert [c.label for c in answer.citations] == ["Shipping Policy"]
    assert answer.trace.stage("synthesize").units == {"input_tokens": 200.0, "output_tokens": 20.0}


def test_throttling_is_retried_then_succeeds(runtime, seed_passages):
    client, stubber = runtime
    stubber.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
    content = json.dumps({"answer": "Standard shipping takes 3 to 5 business days [1].", "citations": [1], "refused": False})
    stubber.add_response("converse", _converse(content))

    answer = ask(QUESTION, passages=seed_passages, chat=BedrockChat(model="m", client=client))

    assert answer.provider == "bedrock:m" and answer.refused is False


def test_access_denied_falls_through_to_extractive(runtime, seed_passages):
    client, stubber = runtime
    stubber.add_client_error("converse", service_error_code="AccessDeniedException", http_status_code=403)

    answer = ask(QUESTION, passages=seed_passages, chat=BedrockChat(model="m", client=client))

    assert answer.provider == "extractive fallback" and answer.refused is False
    assert any("AccessDeniedException" in note for note in answer.trace.notes)


def test_titan_embeddings_request_and_parse(runtime):
    client, stubber = runtime
    vector = [0.0] * 1023 + [2.0]
    stubber.add_response(
        "invoke_model",
        {
            "body": io.BytesIO(json.dumps({"embedding": vector, "inputTextTokenCount": 3}).encode()),
            "contentType": "application/json",
        },
        {
            "modelId": "amazon.titan-embed-text-v2:0",
            "body": json.dumps({"inputText": "hello", "dimensions": 1024, "normalize": True}),
            "contentType": "application/json",
            "accept": "application/json",
        },
    )
    embedder = BedrockTitanEmbedder(client=client)

    matrix = embedder.embed(["hello"], "query")

    assert matrix.shape == (1, 1024)
    assert np.isclose(np.linalg.norm(matrix[0]), 1.0)
    assert embedder.model_id == "bedrock:amazon.titan-embed-text-v2:0"
