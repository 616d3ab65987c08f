"""Capacity and cost model of the AWS deployment (template.yaml + infra/): what a workload needs and costs.

Inputs: tenants, documents and chunks per tenant, searches and answers per second, the share of answers verified,
the chat model. Outputs: the OpenSearch tier (Serverless OCUs, or managed-domain shards and data nodes), DynamoDB
units and the per-tenant hot-partition check, Lambda concurrency and GB-seconds, Bedrock tokens, and dollars per
month and per 1,000 answers. Every constant names the AWS page it comes from (`SOURCES`); per-request compute
comes from our own benchmark (`bench/results/service.json`, measured in the same repository).

    python -m bench.capacity                  # the three scenarios of docs/scaling.md
    python -m bench.capacity --tenants 500 --answers-per-s 20 --searches-per-s 60

Prices are us-east-1 on-demand list prices at the time of writing: check the cited pages before budgeting.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HOURS_PER_MONTH = 730
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600

SOURCES = {
    "lambda": "https://aws.amazon.com/lambda/pricing/ (Arm: $0.0000133334 per GB-s, $0.20 per 1M requests)",
    "lambda-quotas": "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html (1,000 concurrent executions per Region by default)",
    "apigw": "https://aws.amazon.com/api-gateway/pricing/ (REST APIs: $3.50 per million requests, first 333M)",
    "apigw-quotas": "https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html (10,000 requests/s per account and Region)",
    "dynamodb": "https://aws.amazon.com/dynamodb/pricing/on-demand/ ($0.625 per million write units, $0.125 per million read units)",
    "dynamodb-partition": "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html (one partition: 3,000 read units and 1,000 write units per second)",
    "dynamodb-transactions": "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html (a transactional write costs 2 write units per KB per item)",
    "aoss": "https://aws.amazon.com/opensearch-service/pricing/ (Serverless: $0.24 per OCU-hour, $0.024 per GB-month; an OCU is 6 GB of memory)",
    "aoss-min": "https://docs.aws.amazon.com/opensearch-service/latest/developerguide/serverless-scaling.html (vector collections: at least 2 OCUs with standby replicas, 1 without; 0.5-OCU steps)",
    "domain": "https://aws.amazon.com/opensearch-service/pricing/ (r6g.large.search $0.167/h, 16 GiB; xlarge $0.335/h, 32 GiB; 2xlarge $0.67/h, 64 GiB; gp3 $0.122 per GB-month)",
    "knn-memory": "https://docs.aws.amazon.com/opensearch-service/latest/developerguide/knn.html (HNSW memory: 1.1 x (4 x dimension + 8 x M) bytes per vector)",
    "knn-breaker": "https://docs.opensearch.org/latest/vector-search/settings/ (knn.memory.circuit_breaker.limit: 50% of the memory outside the JVM heap)",
    "shards": "https://docs.aws.amazon.com/opensearch-service/latest/developerguide/bp-sharding.html (10-50 GiB per shard for search workloads)",
    "bedrock": "https://aws.amazon.com/bedrock/pricing/ (Titan Text Embeddings V2 $0.00002 per 1K tokens; Claude 3.5 Haiku $0.0008 / $0.004 per 1K input / output tokens)",
    "bedrock-quotas": "https://docs.aws.amazon.com/bedrock/latest/userguide/quotas.html (on-demand tokens per minute per model and Region: check yours in Service Quotas)",
}

LLMS = {  # $ per 1K tokens (input, output): see SOURCES["bedrock"]
    "claude-3-5-haiku": (0.0008, 0.004),
    "claude-3-5-sonnet": (0.003, 0.015),
    "none (extractive)": (0.0, 0.0),
}
INSTANCES = {  # managed domain data nodes: (GiB, $ per hour), SOURCES["domain"]
    "r6g.large.search": (16, 0.167),
    "r6g.xlarge.search": (32, 0.335),
    "r6g.2xlarge.search": (64, 0.67),
}


@dataclass
class Workload:
    name: str = "custom"
    tenants: int = 20
    documents_per_tenant: int = 500
    chunks_per_document: int = 8
    searches_per_s: float = 2.0
    answers_per_s: float = 1.0
    verify_share: float = 0.2
    llm: str = "claude-3-5-haiku"
    busiest_tenant_share: float = 0.2  # the largest tenant's share of all requests (the hot-partition check)
    peak_to_average: float = 3.0  # capacity is sized for the peak, cost for the average
    new_documents_per_tenant_per_day: float = 20.0


@dataclass
class Assumptions:
    """Per-request figures; compute ones come from bench/results/service.json where it exists."""

    dimension: int = 1024  # Titan Text Embeddings V2
    hnsw_m: int = 16  # infra/opensearch/index.json
    replicas: int = 1
    bytes_per_chunk_stored: int = 6_000  # text, terms, sentence offsets, float16 sentence vectors, metadata
    storage_overhead: float = 1.45  # index structures over raw source (AWS sizing guidance uses 1.45)
    search_cpu_ms: float = 36.0  # our CPU per search request, bench/results/service.json (1 client)
    answer_cpu_ms: float = 111.0  # our CPU per extractive answer, same table
    bedrock_embed_ms: float = 60.0  # one query embedding over the network (assumption)
    opensearch_ms: float = 40.0  # one _msearch (BM25 + k-NN) on a warm index (assumption)
    llm_ms: float = 1_800.0  # one answer from the chat model (assumption; the answer function's timeout is 29 s)
    judge_ms: float = 1_200.0
    lambda_gb: float = 1.0  # template.yaml MemorySize
    question_tokens: int = 25
    answer_input_tokens: int = 1_900  # 5 passages of ~300 tokens and the prompt
    answer_output_tokens: int = 160
    judge_input_tokens: int = 900
    judge_output_tokens: int = 200
    chunk_tokens: int = 300
    answer_record_kb: float = 3.0  # the answer log record (citations, receipts, texts)
    queries_per_ocu: float = 60.0  # searches/s one search OCU serves at our query shape (assumption, no published figure)
    queries_per_node: float = 120.0  # searches/s per 2-vCPU data node at ~50% CPU (assumption)
    sources: dict[str, str] = field(default_factory=lambda: dict(SOURCES))

    @classmethod
    def measured(cls) -> Assumptions:
        found = cls()
        results = ROOT / "bench" / "results" / "service.json"
        if results.exists():
            data = json.loads(results.read_text())
            found.search_cpu_ms = round(data.get("http /v1/search c1", {}).get("cpu_ms_per_request", found.search_cpu_ms), 1)
            found.answer_cpu_ms = round(data.get("http /v1/answer c1", {}).get("cpu_ms_per_request", found.answer_cpu_ms), 1)
        return found


def estimate(w: Workload, a: Assumptions) -> dict[str, Any]:
    """The formulas, one block per service; each line says where its constant comes from (SOURCES)."""
    out: dict[str, Any] = {"workload": asdict(w)}
    chunks = w.tenants * w.documents_per_tenant * w.chunks_per_document
    peak_search = w.searches_per_s * w.peak_to_average
    peak_answer = w.answers_per_s * w.peak_to_average
    peak_queries = peak_search + peak_answer  # every answer runs one search

    # --- OpenSearch: memory for the HNSW graphs (knn-memory), storage and shards (shards)
    knn_gib = 1.1 * (4 * a.dimension + 8 * a.hnsw_m) * chunks * (a.replicas + 1) / 2**30
    primary_gib = chunks * (a.bytes_per_chunk_stored + 4 * a.dimension) * a.storage_overhead / 2**30
    shards = max(1, math.ceil(primary_gib / 30))  # 30 GiB per shard, inside the 10-50 GiB guidance
    # Serverless: search OCUs hold the graphs (half of each OCU's 6 GB for vectors) and serve the queries
    search_ocu = max(1.0, math.ceil(2 * max(knn_gib / (a.replicas + 1) / 3.0, peak_queries / a.queries_per_ocu)) / 2)
    index_ocu = max(1.0, math.ceil(2 * (w.tenants * w.new_documents_per_tenant_per_day * w.chunks_per_document / 86400 / 50)) / 2)
    ocus = (search_ocu + index_ocu) * 2  # standby replicas double both (aoss-min)
    aoss_month = ocus * 0.24 * HOURS_PER_MONTH + primary_gib * 0.024
    # Managed domain: the smallest node type whose k-NN share (knn-breaker) holds the graphs on a few nodes
    domain = None
    for kind, (gib, hourly) in INSTANCES.items():
        heap = min(gib / 2, 32)
        knn_per_node = (gib - heap) * 0.5
        nodes = max(2, math.ceil(knn_gib / knn_per_node), math.ceil(peak_queries / a.queries_per_node))
        nodes += nodes % 2  # two availability zones
        if nodes <= 20 or kind == list(INSTANCES)[-1]:
            storage = primary_gib * (a.replicas + 1) * 1.2
            domain = {
                "instance": kind,
                "data_nodes": nodes,
                "dollars_month": round(nodes * hourly * HOURS_PER_MONTH + storage * 0.122, 0),
            }
            break
    out["opensearch"] = {
        "chunks": chunks,
        "knn_memory_gib": round(knn_gib, 1),
        "primary_storage_gib": round(primary_gib, 1),
        "shards": shards,
        "serverless_ocus": ocus,
        "serverless_dollars_month": round(aoss_month, 0),
        "domain": domain,
    }

    # --- DynamoDB (dynamodb, dynamodb-transactions): a charge is a 2-item transaction (counter + usage record),
    # the settle one put (search) or a 2-item transaction with the answer log record (answer)
    answer_kb = math.ceil(a.answer_record_kb)
    wru_search = 2 * 2 + 1
    wru_answer = 2 * 2 + 2 * (1 + answer_kb)
    rru = 1 + 0.5  # the key (strongly consistent) and the tenant (eventually consistent)
    writes_per_s = w.searches_per_s * wru_search + w.answers_per_s * wru_answer
    reads_per_s = (w.searches_per_s + w.answers_per_s) * rru
    dynamo_month = (writes_per_s * 0.625 + reads_per_s * 0.125) * SECONDS_PER_MONTH / 1e6
    # hot partition (dynamodb-partition): all of a tenant's items share pk TENANT#{tenant}; the counter is one item
    busiest = w.busiest_tenant_share * peak_queries
    busiest_wcu = w.busiest_tenant_share * (peak_search * wru_search + peak_answer * wru_answer)
    counter_wcu = busiest * 2
    counter_shards = max(1, math.ceil(counter_wcu / 800))  # 80% of one item's 1,000 write units
    key_shards = max(1, math.ceil(busiest_wcu / 800))  # the tenant's records spread over this many partition keys
    out["dynamodb"] = {
        "write_units_per_s": round(writes_per_s, 1),
        "read_units_per_s": round(reads_per_s, 1),
        "dollars_month": round(dynamo_month, 0),
        "busiest_tenant_requests_per_s": round(busiest, 1),
        "busiest_tenant_write_units_per_s": round(busiest_wcu, 0),
        "counter_item_write_units_per_s": round(counter_wcu, 0),
        "hot_partition": busiest_wcu > 1000,
        "counter_shards_needed": counter_shards,
        "partition_key_shards_needed": key_shards,
    }

    # --- Lambda (lambda, lambda-quotas): Little's law for concurrency, GB-seconds for cost
    search_s = (a.search_cpu_ms + a.bedrock_embed_ms + a.opensearch_ms) / 1000
    answer_s = search_s + (a.answer_cpu_ms / 1000) + (a.llm_ms / 1000 if w.llm in LLMS and LLMS[w.llm][0] else 0)
    answer_s += w.verify_share * (a.judge_ms / 1000 if LLMS.get(w.llm, (0, 0))[0] else 0.01)
    concurrency = peak_search * search_s + peak_answer * answer_s
    gb_s = (w.searches_per_s * search_s + w.answers_per_s * answer_s) * a.lambda_gb * SECONDS_PER_MONTH
    requests_month = (w.searches_per_s + w.answers_per_s) * SECONDS_PER_MONTH
    lambda_month = gb_s * 0.0000133334 + requests_month / 1e6 * 0.20
    out["lambda"] = {
        "search_s": round(search_s, 3),
        "answer_s": round(answer_s, 3),
        "peak_concurrency": math.ceil(concurrency),
        "over_default_quota": concurrency > 1000,
        "dollars_month": round(lambda_month, 0),
    }

    # --- API Gateway (apigw, apigw-quotas)
    out["api_gateway"] = {
        "peak_requests_per_s": round(peak_queries, 1),
        "over_account_throttle": peak_queries > 10_000,
        "dollars_month": round(requests_month / 1e6 * 3.50, 0),
    }

    # --- Bedrock (bedrock, bedrock-quotas)
    price_in, price_out = LLMS[w.llm]
    llm_in = w.answers_per_s * (a.answer_input_tokens + w.verify_share * a.judge_input_tokens) if price_in else 0.0
    llm_out = w.answers_per_s * (a.answer_output_tokens + w.verify_share * a.judge_output_tokens) if price_in else 0.0
    embed_tokens = (w.searches_per_s + w.answers_per_s) * a.question_tokens + (
        w.tenants * w.new_documents_per_tenant_per_day * w.chunks_per_document * a.chunk_tokens / 86400
    )
    bedrock_month = ((llm_in * price_in + llm_out * price_out) / 1000 + embed_tokens * 0.00002 / 1000) * SECONDS_PER_MONTH
    out["bedrock"] = {
        "llm_tokens_per_minute_peak": round((llm_in + llm_out) * w.peak_to_average * 60, 0),
        "embedding_tokens_per_minute_peak": round(embed_tokens * w.peak_to_average * 60, 0),
        "dollars_month": round(bedrock_month, 0),
    }

    serverless_total = aoss_month + dynamo_month + lambda_month + out["api_gateway"]["dollars_month"] + bedrock_month
    domain_total = serverless_total - aoss_month + (domain["dollars_month"] if domain else 0)
    answers_month = w.answers_per_s * SECONDS_PER_MONTH
    out["total"] = {
        "dollars_month_with_serverless": round(serverless_total, 0),
        "dollars_month_with_domain": round(domain_total, 0),
        "dollars_per_1000_answers_serverless": round(serverless_total / answers_month * 1000, 3) if answers_month else None,
    }
    out["breaks_first"] = breaks_first(out)
    return out


def breaks_first(r: dict[str, Any]) -> list[str]:
    """The limits this workload hits, most urgent first, with the design change each needs."""
    found = []
    if r["dynamodb"]["hot_partition"]:
        found.append(
            f"DynamoDB: the busiest tenant writes {r['dynamodb']['busiest_tenant_write_units_per_s']:.0f} units/s to one partition key "
            f"(limit 1,000): spread its request, answer and audit records over {r['dynamodb']['partition_key_shards_needed']} "
            "keys (TENANT#{tenant}#{n}, n from the request id), keep the quota counter in "
            f"{r['dynamodb']['counter_shards_needed']} item(s) (each shard takes quota / shards), or buffer usage records through SQS"
        )
    if r["lambda"]["over_default_quota"]:
        found.append(
            f"Lambda: {r['lambda']['peak_concurrency']} concurrent executions at peak, over the default 1,000: request a quota "
            "increase, and give the answer function reserved concurrency so search cannot starve it"
        )
    if r["api_gateway"]["over_account_throttle"]:
        found.append("API Gateway: over 10,000 requests/s per account: request an increase or split Regions")
    if r["opensearch"]["knn_memory_gib"] > 200:
        found.append(
            f"OpenSearch: {r['opensearch']['knn_memory_gib']:.0f} GiB of HNSW graphs: use a managed domain with r-class nodes "
            "(or on-disk / quantised vectors) rather than Serverless OCUs, and route tenants to index shards"
        )
    if r["bedrock"]["llm_tokens_per_minute_peak"] > 2_000_000:
        found.append(
            f"Bedrock: {r['bedrock']['llm_tokens_per_minute_peak']:,.0f} tokens/min at peak: request a tokens-per-minute increase "
            "or use a cross-region inference profile; the extractive fallback answers when the model throttles"
        )
    return found or ["nothing at these rates: the defaults of every service suffice"]


SCENARIOS = [
    Workload(name="startup: 20 tenants", tenants=20, documents_per_tenant=500, searches_per_s=1, answers_per_s=0.2),
    Workload(
        name="scale-up: 1,000 tenants, 50 answers/s",
        tenants=1_000,
        documents_per_tenant=2_000,
        searches_per_s=100,
        answers_per_s=50,
        busiest_tenant_share=0.05,
    ),
    Workload(
        name="internet scale: 100,000 tenants, 2,000 answers/s",
        tenants=100_000,
        documents_per_tenant=1_000,
        searches_per_s=4_000,
        answers_per_s=2_000,
        busiest_tenant_share=0.02,
        new_documents_per_tenant_per_day=5,
    ),
]


def report(results: list[dict[str, Any]]) -> str:
    from bench.common import table

    rows = []
    for label, path in [
        ("chunks", ("opensearch", "chunks")),
        ("HNSW memory GiB (with replicas)", ("opensearch", "knn_memory_gib")),
        ("primary storage GiB", ("opensearch", "primary_storage_gib")),
        ("index shards (30 GiB each)", ("opensearch", "shards")),
        ("Serverless OCUs (with standby)", ("opensearch", "serverless_ocus")),
        ("Serverless $/month", ("opensearch", "serverless_dollars_month")),
        ("DynamoDB write units/s (average)", ("dynamodb", "write_units_per_s")),
        ("DynamoDB read units/s (average)", ("dynamodb", "read_units_per_s")),
        ("busiest tenant's write units/s (peak)", ("dynamodb", "busiest_tenant_write_units_per_s")),
        ("partition keys per busiest tenant", ("dynamodb", "partition_key_shards_needed")),
        ("DynamoDB $/month", ("dynamodb", "dollars_month")),
        ("Lambda peak concurrency", ("lambda", "peak_concurrency")),
        ("Lambda $/month", ("lambda", "dollars_month")),
        ("API Gateway $/month", ("api_gateway", "dollars_month")),
        ("LLM tokens/min (peak)", ("bedrock", "llm_tokens_per_minute_peak")),
        ("Bedrock $/month", ("bedrock", "dollars_month")),
        ("total $/month (Serverless)", ("total", "dollars_month_with_serverless")),
        ("total $/month (managed domain)", ("total", "dollars_month_with_domain")),
        ("$ per 1,000 answers (Serverless)", ("total", "dollars_per_1000_answers_serverless")),
    ]:
        rows.append([label, *[r[path[0]][path[1]] for r in results]])
    domain_row = ["managed domain"] + [
        f"{r['opensearch']['domain']['data_nodes']} x {r['opensearch']['domain']['instance']}" for r in results
    ]
    rows.insert(6, domain_row)
    text = table("Capacity and cost per scenario (peak = 3 x average)", ["", *[r["workload"]["name"] for r in results]], rows)
    for r in results:
        text += (
            f"\n**{r['workload']['name']}: what breaks first**\n\n" + "\n".join(f"- {line}" for line in r["breaks_first"]) + "\n"
        )
    return text


SCALING = ROOT / "docs" / "scaling.md"
BEGIN, END = "<!-- capacity:begin -->", "<!-- capacity:end -->"


def with_report(document: str, text: str) -> str:
    """docs/scaling.md with the scenario tables between its markers replaced by `text`."""
    head, _, rest = document.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{text}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tenants", type=int)
    parser.add_argument("--documents-per-tenant", type=int, default=500)
    parser.add_argument("--chunks-per-document", type=int, default=8)
    parser.add_argument("--searches-per-s", type=float, default=2.0)
    parser.add_argument("--answers-per-s", type=float, default=1.0)
    parser.add_argument("--verify-share", type=float, default=0.2)
    parser.add_argument("--llm", choices=sorted(LLMS), default="claude-3-5-haiku")
    parser.add_argument("--json", action="store_true", help="print the estimates as JSON")
    args = parser.parse_args(argv)
    assumptions = Assumptions.measured()
    if args.tenants:
        workloads = [
            Workload(
                tenants=args.tenants,
                documents_per_tenant=args.documents_per_tenant,
                chunks_per_document=args.chunks_per_document,
                searches_per_s=args.searches_per_s,
                answers_per_s=args.answers_per_s,
                verify_share=args.verify_share,
                llm=args.llm,
            )
        ]
    else:
        workloads = SCENARIOS
    results = [estimate(w, assumptions) for w in workloads]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    text = report(results)
    if not args.tenants:
        from bench.common import write_result

        write_result("capacity", text, {"assumptions": asdict(assumptions), "scenarios": results})
        SCALING.write_text(with_report(SCALING.read_text(encoding="utf-8"), text), encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
