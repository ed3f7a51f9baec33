#pragma D option errtags
/* stack()'s argument that is not an integer constant: dt_action_stack_args' words. */
BEGIN
{
	stack("four");
}
