/* An action is void: against an int the branches' types disagree before
   the action is refused (dt_cook_op3). */
BEGIN
{
	x = timestamp ? 1 : trace(2);
}
