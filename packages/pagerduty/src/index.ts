export { type PagerDutyInstanceRef, type PagerDutyMap, pagerDutyMap } from './map.ts';
/** @public The brief's API: the user fields names are matched on, and the pure target check. */
export {
  type PagerDutyTargetRef,
  type PagerDutyUserRef,
  pagerDutyNotFoundWarning,
  usernamesFromPagerDuty,
  validatePagerDutyTarget,
} from './usernames.ts';
