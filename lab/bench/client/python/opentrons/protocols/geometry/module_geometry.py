"""module_geometry as robot software before 7.0 has it: models_compatible and
module_model_from_string (a module model is its name, e.g. "temperatureModuleV2")."""

_MODELS = ("magneticModuleV1", "magneticModuleV2", "temperatureModuleV1", "temperatureModuleV2",
           "thermocyclerModuleV1", "thermocyclerModuleV2", "heaterShakerModuleV1")


def _value(model):
    return getattr(model, "value", model)


def models_compatible(requested_model, candidate_definition):
    """Whether a requested model is the definition's model or one it is compatible with."""
    want = _value(requested_model)
    return want == candidate_definition["model"] or want in candidate_definition.get("compatibleWith", ())


def module_model_from_string(model_string):
    if model_string in _MODELS:
        return model_string
    raise ValueError("No such module model %s" % model_string)
