package bench.max_changes

changed := [rc | some rc in input.terraform.resource_changes; not rc.change.actions == ["no-op"]]

warn contains sprintf("%d resources change at once", [count(changed)]) if count(changed) > 50
