"""Real OAI-PMH harvesters from PyPI, run against the service by test/integration/oai-harvesters.test.ts.

Each command prints one JSON document on stdout; any exception of a harvester
(a response it cannot parse, a protocol error it raises) exits non-zero with
the traceback on stderr.

  sickle URL VERB PREFIX [FROM] [TOKEN]  every header (and whether metadata came), by Sickle
  scythe URL IDENTIFIER SET [TOKEN]      every verb by oaipmh-scythe (GET, then POST), the lists of one set
  pyoai URL IDENTIFIER                   Identify, ListMetadataFormats and GetRecord by pyoai's client
"""

import json
import sys


def bearer(token):
    return {"Authorization": f"Bearer {token}"} if token else {}


def sickle(url, verb, prefix, from_=None, token=None):
    from sickle import Sickle

    harvester = Sickle(url, headers=bearer(token), max_retries=0)
    args = {"metadataPrefix": prefix, "ignore_deleted": False}
    if from_:
        args["from"] = from_
    items = []
    if verb == "ListRecords":
        for record in harvester.ListRecords(**args):
            header = record.header
            items.append({"identifier": header.identifier, "datestamp": header.datestamp, "deleted": header.deleted,
                          "sets": header.setSpecs, "metadata": record.raw.count("<metadata>") == 1})
    else:
        for header in harvester.ListIdentifiers(**args):
            items.append({"identifier": header.identifier, "datestamp": header.datestamp, "deleted": header.deleted,
                          "sets": header.setSpecs})
    return {"items": items}


def scythe(url, identifier, set_, token=None):
    import httpx2
    from oaipmh_scythe import Scythe
    from oaipmh_scythe.config import HTTPConfig

    class Bearer(httpx2.Auth):
        def auth_flow(self, request):
            if token:
                request.headers["Authorization"] = f"Bearer {token}"
            yield request

    seen = {}
    for method in ("GET", "POST"):
        with Scythe(url, http_config=HTTPConfig(http_method=method, auth=Bearer())) as harvester:
            identify = harvester.identify()
            formats = [f.metadataPrefix for f in harvester.list_metadata_formats()]
            sets = [s.setSpec for s in harvester.list_sets()]
            headers = [h.identifier for h in harvester.list_identifiers(metadata_prefix="oai_dc", set_=set_)]
            dc = [r.header.identifier for r in harvester.list_records(metadata_prefix="oai_dc", set_=set_)]
            native = [r.header.identifier for r in harvester.list_records(metadata_prefix="cam-2025", set_=set_)]
            record = harvester.get_record(identifier=identifier, metadata_prefix="cam-2025")
            seen[method] = {"repositoryName": identify.repositoryName, "formats": formats, "sets": sets,
                            "identifiers": len(headers), "oai_dc": len(dc), "cam-2025": len(native),
                            "record": record.header.identifier}
    return seen


def pyoai(url, identifier):
    from oaipmh.client import Client
    from oaipmh.metadata import MetadataRegistry, oai_dc_reader

    registry = MetadataRegistry()
    registry.registerReader("oai_dc", oai_dc_reader)
    client = Client(url, registry)
    identify = client.identify()
    formats = [prefix for prefix, _schema, _namespace in client.listMetadataFormats()]
    header, metadata, _about = client.getRecord(identifier=identifier, metadataPrefix="oai_dc")
    return {"repositoryName": identify.repositoryName(), "granularity": identify.granularity(),
            "deletedRecord": identify.deletedRecord(), "formats": formats, "identifier": header.identifier(),
            "datestamp": header.datestamp().strftime("%Y-%m-%dT%H:%M:%SZ"), "title": metadata.getField("title"),
            "type": metadata.getField("type")}


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    print(json.dumps({"sickle": sickle, "scythe": scythe, "pyoai": pyoai}[command](*[a or None for a in rest])))
