#pragma D option errtags
/* stack()'s frame count is checked in dt_action_stack_args' words. */
BEGIN
{
	stack(0);
}
