"""Specs of the graph tasks (torch-free; each task's code is its own module in zoo/tasks/)."""
from ..specs import TaskSpec

TASKS = [
    TaskSpec(
        name="graph_embed",
        contract="model(node_ids: (B,) long) -> (B, d); model.fit(GraphData, *, epochs, seed) -> dict; "
                 "model.embeddings() -> (N, d); optional model.distance(i, j) -> (B,)",
        evaluate="zoo.tasks.graph_embed:evaluate",
        example_input="zoo.tasks.graph_embed:example_input",
        check_output="zoo.tasks.graph_embed:check_output",
        baselines=("common_neighbours", "jaccard", "adamic_adar", "preferential_attachment", "spectral"),
        description="node embeddings of networkx's bundled real graphs (link prediction: seeded 50% edge "
                    "split keeping the graph connected, Hadamard + logistic regression ROC-AUC) and of "
                    "hierarchies (WordNet mammal closure from Debian wordnet-base, else a synthetic tree: "
                    "reconstruction mean rank and MAP)",
    ),
]
