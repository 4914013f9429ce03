"""zoo plugin of the task distribution: the specs of graph_embed (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="graph_embed",
        contract="model(node_ids: (B,) long) -> (B, d); model.fit(GraphData, *, epochs, seed) -> dict; "
                 "model.embeddings() -> (N, d); optional model.distance(i, j) -> (B,)",
        evaluate="zoo_task_graph_embed.task:evaluate",
        example_input="zoo_task_graph_embed.task:example_input",
        check_output="zoo_task_graph_embed.task:check_output",
        describe="zoo_task_graph_embed.task:describe",
        baselines=("common_neighbours", "jaccard", "adamic_adar", "preferential_attachment", "spectral"),
        description="node embeddings of real graphs: networkx's bundled ones and node2vec's Wikipedia word "
                    "co-occurrence network rebuilt from packaged Wikipedia leads (500 words, [wiki] extra) "
                    "(link prediction: seeded 50% edge "
                    "split keeping the graph connected, Hadamard + logistic regression ROC-AUC) and of "
                    "hierarchies (WordNet mammal closure from Debian wordnet-base, else a synthetic tree: "
                    "reconstruction mean rank and MAP)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
